// Scripts and tests (§6): compile (its result journaled the moment
// compilation finishes, so a compile cut off by the domain reload it causes
// can be resumed) and run-tests (NUnit 3 XML on request).

using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    public class CompileParams
    {
        [Param("Whether to perform forced recompilation")]
        public bool ForceRecompile;
    }

    /// <summary>A compiler message as compile reports it.</summary>
    public class CompileMessage
    {
        /// <summary>As Unity's console shows it: File(line,col): error CS0000: text.</summary>
        public string Message;
        public string File;
        public int Line;
    }

    public class CompileResult
    {
        public bool Success;
        public int ErrorCount;
        public int WarningCount;

        /// <summary>ISO 8601, UTC.</summary>
        [ShortText]
        public string CompletedAt;

        public List<CompileMessage> Errors = new List<CompileMessage>();
        public List<CompileMessage> Warnings = new List<CompileMessage>();
        public string Message;
    }

    [McpTool("compile", Description = "Executes compilation after AssetDatabase.Refresh(). Returns compilation results with detailed timing information.", Order = 10, Idempotent = true, TimeoutSeconds = 300)]
    public sealed class CompileTool : UnityTool<CompileParams, CompileResult>
    {
        protected override async Task<CompileResult> Answer(CompileParams p, ToolContext context)
        {
            CompileResult result = null;
            var report = await context.Editor.Compile(p.ForceRecompile, context, finished =>
            {
                result = ResultOf(finished);
                if (finished.ReloadFollows)
                {
                    context.JournalAnswer(ToolResults.ToJson(result));
                }
            }).ConfigureAwait(false);
            result = result ?? ResultOf(report);
            if (report.ReloadFollows)
            {
                throw new AnswerWithheld(ToolResults.ToJson(result));
            }
            return result;
        }

        /// <summary>The compile tool's result for a report.</summary>
        public static CompileResult ResultOf(CompileReport report)
        {
            var errors = new List<CompileMessage>();
            var warnings = new List<CompileMessage>();
            foreach (var d in report.Diagnostics)
            {
                (d.IsError ? errors : warnings).Add(new CompileMessage { Message = d.UnityMessage, File = d.File, Line = d.Line });
            }
            string message;
            if (errors.Count > 0)
            {
                message = "Compilation failed with " + errors.Count + " error(s) and " + warnings.Count + " warning(s)";
            }
            else if (warnings.Count > 0)
            {
                message = "Compilation completed successfully with " + warnings.Count + " warning(s)";
            }
            else
            {
                message = "Compilation completed successfully";
            }
            return new CompileResult
            {
                Success = errors.Count == 0,
                ErrorCount = errors.Count,
                WarningCount = warnings.Count,
                CompletedAt = DiscoveryFile.IsoTimestamp(DateTime.UtcNow),
                Errors = errors,
                Warnings = warnings,
                Message = message,
            };
        }
    }

    public enum TestFilterType
    {
        all,
        exact,
        regex,
        assembly,
    }

    public enum TestMode
    {
        EditMode,
        PlayMode,
    }

    public class RunTestsParams
    {
        [Param("Type of test filter")]
        public TestFilterType FilterType = TestFilterType.all;

        [Param("Filter value (specify when FilterType is other than all): exact = full test name, regex = class name or namespace pattern, assembly = assembly name")]
        public string FilterValue = "";

        [Param("Test mode")]
        public TestMode TestMode = TestMode.EditMode;

        [Param("Whether to save test results as NUnit XML under .uloop/outputs/TestResults/")]
        public bool SaveXml;
    }

    public class FailedTest
    {
        public string FullName;
        public string Message;
    }

    public class RunTestsResult
    {
        public bool Success;
        public string Message;

        /// <summary>ISO 8601, UTC.</summary>
        [ShortText]
        public string CompletedAt;

        public int TestCount;
        public int PassedCount;
        public int FailedCount;
        public int SkippedCount;

        /// <summary>The NUnit XML's project-relative path; empty unless SaveXml.</summary>
        public string XmlPath;

        public List<FailedTest> FailedTests = new List<FailedTest>();
    }

    [McpTool("run-tests", Description = "Executes Unity Test Runner and retrieves test results with comprehensive reporting", Order = 30, Idempotent = true, TimeoutSeconds = 600, Gate = ToolGate.TestsExecution)]
    public sealed class RunTestsTool : UnityTool<RunTestsParams, RunTestsResult>
    {
        public const string Name = "run-tests";

        protected override async Task<RunTestsResult> Answer(RunTestsParams p, ToolContext context)
        {
            if (p.FilterType != TestFilterType.all && p.FilterValue.Length == 0)
            {
                throw new RpcError(RpcErrorKind.InvalidParams, "Parameter 'FilterValue' is required when FilterType is " + p.FilterType).With("parameter", "FilterValue");
            }
            if (p.FilterType == TestFilterType.regex)
            {
                Patterns.Regex("FilterValue", p.FilterValue);
            }
            var editor = context.Editor;
            var started = DateTime.UtcNow;
            if (p.TestMode == TestMode.PlayMode && context.Dispatcher.PlayModeRuns != null && editor.EnteringPlayModeReloadsDomain)
            {
                // Entering play mode reloads the domain: this call dies with
                // it, and the next domain answers it when the Test Framework
                // has finished the run there (PlayModeRuns).
                context.CarryAcrossReload(new CarriedCall { State = Carried(p, started) });
            }
            var results = await editor.RunTests(new TestSelection { Mode = p.TestMode, FilterType = p.FilterType, FilterValue = p.FilterValue }, context).ConfigureAwait(false);
            return Report(p, results, started, editor);
        }

        /// <summary>What the next domain needs to answer a run carried across the reload.</summary>
        static JObject Carried(RunTestsParams p, DateTime started) => new JObject
        {
            ["FilterType"] = p.FilterType.ToString(),
            ["FilterValue"] = p.FilterValue,
            ["TestMode"] = p.TestMode.ToString(),
            ["SaveXml"] = p.SaveXml,
            ["Started"] = started.ToString("o", CultureInfo.InvariantCulture),
        };

        /// <summary>The answer to a run carried across the reload, from its results.</summary>
        public static RunTestsResult AnswerCarried(JObject carried, List<TestResult> results, IEditorBackend editor)
        {
            var p = new RunTestsParams
            {
                FilterType = (TestFilterType)Enum.Parse(typeof(TestFilterType), (string)carried["FilterType"]),
                FilterValue = (string)carried["FilterValue"] ?? "",
                TestMode = (TestMode)Enum.Parse(typeof(TestMode), (string)carried["TestMode"]),
                SaveXml = (bool?)carried["SaveXml"] ?? false,
            };
            var started = DateTime.Parse((string)carried["Started"], CultureInfo.InvariantCulture, DateTimeStyles.RoundtripKind).ToUniversalTime();
            return Report(p, results, started, editor);
        }

        /// <summary>The run's counts, message, failures and (when asked) NUnit XML.</summary>
        static RunTestsResult Report(RunTestsParams p, List<TestResult> results, DateTime started, IEditorBackend editor)
        {
            var passed = results.Count(t => t.Outcome == TestOutcome.Passed);
            var failed = results.Count(t => t.Outcome == TestOutcome.Failed);
            var skipped = results.Count(t => t.Outcome == TestOutcome.Skipped);
            var total = results.Count;
            var mode = p.TestMode.ToString();
            string message;
            if (total == 0)
            {
                message = "No " + mode + " tests matched the filter (FilterType=" + p.FilterType + ", FilterValue=" + JsonQuote(p.FilterValue) + ")";
            }
            else if (failed == 0)
            {
                message = "All " + mode + " tests passed: " + passed + " passed, " + skipped + " skipped out of " + total;
            }
            else
            {
                message = mode + " tests failed: " + passed + " passed, " + failed + " failed, " + skipped + " skipped out of " + total;
            }
            var xmlPath = "";
            if (p.SaveXml)
            {
                var xml = NUnitXml.Of(results, started, DateTime.UtcNow);
                xmlPath = OutputFiles.Write(editor.ProjectPath, "TestResults", "TestResults", "xml", Encoding.UTF8.GetBytes(xml));
            }
            var failures = new List<FailedTest>();
            foreach (var t in results.Where(t => t.Outcome == TestOutcome.Failed))
            {
                failures.Add(new FailedTest { FullName = t.FullName, Message = t.Message });
            }
            return new RunTestsResult
            {
                Success = total > 0 && failed == 0,
                Message = message,
                CompletedAt = DiscoveryFile.IsoTimestamp(DateTime.UtcNow),
                TestCount = total,
                PassedCount = passed,
                FailedCount = failed,
                SkippedCount = skipped,
                XmlPath = xmlPath,
                FailedTests = failures,
            };
        }

        static string JsonQuote(string text) => new JValue(text).ToString(Newtonsoft.Json.Formatting.None);

        /// <summary>Does a selection take this test (for Editors that filter themselves)?</summary>
        public static bool Selects(TestSelection selection, TestResult test)
        {
            switch (selection.FilterType)
            {
                case TestFilterType.exact:
                    return test.FullName == selection.FilterValue;
                case TestFilterType.assembly:
                    return test.Assembly == selection.FilterValue;
                case TestFilterType.regex:
                    return Patterns.Regex("FilterValue", selection.FilterValue).IsMatch(test.FullName);
                default:
                    return true;
            }
        }
    }

    /// <summary>NUnit 3 result XML: test-run, then assembly suites, fixtures, cases.</summary>
    public static class NUnitXml
    {
        public static string Of(List<TestResult> tests, DateTime start, DateTime end)
        {
            Func<DateTime, string> time = t => t.ToUniversalTime().ToString("yyyy-MM-dd HH:mm:ss'Z'", CultureInfo.InvariantCulture);
            var startText = time(start);
            var endText = time(end);
            var xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
            xml.Append("<test-run id=\"2\" ").Append(Totals(tests)).Append(" engine-version=\"3.5.0.0\" clr-version=\"4.0.30319.42000\" start-time=\"")
                .Append(startText).Append("\" end-time=\"").Append(endText).Append("\">\n");
            var id = 1000;
            foreach (var assembly in tests.Select(t => t.Assembly).Distinct().OrderBy(a => a, StringComparer.Ordinal))
            {
                var inAssembly = tests.Where(t => t.Assembly == assembly).ToList();
                id++;
                xml.Append("  <test-suite type=\"Assembly\" id=\"").Append(id).Append("\" name=\"").Append(Escape(assembly)).Append(".dll\" fullname=\"")
                    .Append(Escape(assembly)).Append(".dll\" runstate=\"Runnable\" ").Append(Totals(inAssembly))
                    .Append(" start-time=\"").Append(startText).Append("\" end-time=\"").Append(endText).Append("\">\n");
                foreach (var fixture in inAssembly.Select(t => Split(t.FullName)[0]).Distinct())
                {
                    var cases = inAssembly.Where(t => Split(t.FullName)[0] == fixture).ToList();
                    id++;
                    var shortName = fixture.Substring(fixture.LastIndexOf('.') + 1);
                    xml.Append("    <test-suite type=\"TestFixture\" id=\"").Append(id).Append("\" name=\"").Append(Escape(shortName)).Append("\" fullname=\"")
                        .Append(Escape(fixture)).Append("\" classname=\"").Append(Escape(fixture)).Append("\" runstate=\"Runnable\" ").Append(Totals(cases))
                        .Append(" start-time=\"").Append(startText).Append("\" end-time=\"").Append(endText).Append("\">\n");
                    foreach (var test in cases)
                    {
                        id++;
                        var parts = Split(test.FullName);
                        var skippedCase = test.Outcome == TestOutcome.Skipped;
                        xml.Append("      <test-case id=\"").Append(id).Append("\" name=\"").Append(Escape(parts[1])).Append("\" fullname=\"").Append(Escape(test.FullName))
                            .Append("\" methodname=\"").Append(Escape(parts[1])).Append("\" classname=\"").Append(Escape(parts[0]))
                            .Append("\" runstate=\"").Append(skippedCase ? "Ignored" : "Runnable").Append("\" seed=\"0\" result=\"").Append(test.Outcome)
                            .Append(skippedCase ? "\" label=\"Ignored" : "").Append("\" start-time=\"").Append(startText).Append("\" end-time=\"").Append(endText)
                            .Append("\" duration=\"").Append(Seconds(test.DurationMs)).Append("\" asserts=\"0\"");
                        switch (test.Outcome)
                        {
                            case TestOutcome.Passed:
                                xml.Append(" />\n");
                                break;
                            case TestOutcome.Failed:
                                xml.Append(">\n        <failure>\n          <message>").Append(Cdata(test.Message)).Append("</message>\n          <stack-trace>")
                                    .Append(Cdata(test.StackTrace)).Append("</stack-trace>\n        </failure>\n      </test-case>\n");
                                break;
                            default:
                                xml.Append(">\n        <reason>\n          <message>").Append(Cdata(test.Message)).Append("</message>\n        </reason>\n      </test-case>\n");
                                break;
                        }
                    }
                    xml.Append("    </test-suite>\n");
                }
                xml.Append("  </test-suite>\n");
            }
            xml.Append("</test-run>\n");
            return xml.ToString();
        }

        static string Totals(List<TestResult> cases)
        {
            var passed = cases.Count(t => t.Outcome == TestOutcome.Passed);
            var failed = cases.Count(t => t.Outcome == TestOutcome.Failed);
            var skipped = cases.Count(t => t.Outcome == TestOutcome.Skipped);
            var result = failed > 0 ? "Failed" : passed > 0 ? "Passed" : "Skipped";
            var site = failed > 0 ? " site=\"Child\"" : "";
            return "testcasecount=\"" + cases.Count + "\" result=\"" + result + "\"" + site + " total=\"" + cases.Count + "\" passed=\"" + passed + "\" failed=\"" + failed
                + "\" inconclusive=\"0\" skipped=\"" + skipped + "\" asserts=\"0\" duration=\"" + Seconds(cases.Sum(t => t.DurationMs)) + "\"";
        }

        /// <summary>Class and method of a full test name.</summary>
        static string[] Split(string fullName)
        {
            var dot = fullName.LastIndexOf('.');
            return dot < 0 ? new[] { "", fullName } : new[] { fullName.Substring(0, dot), fullName.Substring(dot + 1) };
        }

        static string Seconds(long ms) => (ms / 1000.0).ToString("F6", CultureInfo.InvariantCulture);

        static string Escape(string s) => s.Replace("&", "&amp;").Replace("<", "&lt;").Replace(">", "&gt;").Replace("\"", "&quot;");

        static string Cdata(string s) => "<![CDATA[" + s.Replace("]]>", "]]]]><![CDATA[>") + "]]>";
    }
}
