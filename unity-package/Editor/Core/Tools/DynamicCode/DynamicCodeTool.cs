// execute-dynamic-code (§6) with the seeds' security levels: Disabled
// (refused by the security checker), Restricted (compiled code that is or
// uses anything off RestrictedCode's rules is refused before it runs),
// FullAccess. At every level the snippet is compiled off the main thread
// under its own time limit (a compiler bomb must not freeze the Editor), its
// IL is rewritten so SnippetGuard bounds it (deadline, steps, nesting, and at
// Restricted its allocations), and only then is it run on the Editor's main
// thread, which comes back at the call's deadline. The tool awaits the main
// thread, so the deadline is answered even while a snippet holds it.

using System;
using System.CodeDom.Compiler;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    public class DynamicCodeParams
    {
        [Param("The C# code to execute")]
        public string Code = "";

        [Param("Runtime parameters for execution")]
        public JObject Parameters = new JObject();

        [Param("Only compile, do not execute")]
        public bool CompileOnly;
    }

    public class CompilationError
    {
        public string Message;
        public int Line;
        public int Column;
        public string ErrorCode;
    }

    /// <summary>
    /// execute-dynamic-code's answer. Result is the snippet's return value
    /// as text (empty for null or nothing), so it is typed: a string.
    /// </summary>
    public class DynamicCodeResult
    {
        public bool Success;
        public string Result;
        public List<string> Logs = new List<string>();
        public List<CompilationError> CompilationErrors = new List<CompilationError>();
        public string ErrorMessage;
        public DynamicCodeSecurityLevel SecurityLevel;
        public string UpdatedCode;
    }

    [McpTool("execute-dynamic-code", Description = "Execute C# code dynamically within Unity Editor. Implements security levels and automatic using statement processing with enhanced error messaging", Order = 110, Destructive = true, TimeoutSeconds = 60, Gate = ToolGate.DynamicCode)]
    public sealed class ExecuteDynamicCodeTool : UnityTool<DynamicCodeParams, DynamicCodeResult>
    {
        protected override async Task<DynamicCodeResult> Answer(DynamicCodeParams p, ToolContext context)
        {
            if (p.Code.Trim().Length == 0)
            {
                throw new RpcError(RpcErrorKind.InvalidParams, "Parameter 'Code' must not be empty").With("parameter", "Code");
            }
            var level = context.Dispatcher.Security.Settings.DynamicCodeSecurityLevel;
            var limits = SnippetLimits.For(level);
            var editor = context.Editor;
            var runner = editor.SnippetRunner();
            // Compiled, audited and rewritten on a worker: only the run itself
            // takes the main thread.
            var prepared = await Task.Run(() => runner.Prepare(p.Code, level, limits, context.Deadline)).ConfigureAwait(false);
            CodeRun run;
            if (prepared.Failed != null)
            {
                run = prepared.Failed;
            }
            else if (p.CompileOnly)
            {
                run = new CodeRun { Success = true };
            }
            else
            {
                run = await editor.ExecuteSnippet(prepared, p.Parameters, limits, context.Deadline).ConfigureAwait(false);
            }
            if (run.Stopped == SnippetStop.Deadline)
            {
                throw new RpcError(RpcErrorKind.Timeout, run.ErrorMessage + "; the Editor goes on");
            }
            var errors = new List<CompilationError>();
            foreach (var e in run.Errors)
            {
                errors.Add(new CompilationError { Message = e.Message, Line = e.Line, Column = e.Column, ErrorCode = e.ErrorCode });
            }
            return new DynamicCodeResult
            {
                Success = run.Success,
                Result = run.Result,
                Logs = run.Logs.ToList(),
                CompilationErrors = errors,
                ErrorMessage = run.ErrorMessage,
                SecurityLevel = level,
                UpdatedCode = p.Code,
            };
        }
    }

    /// <summary>A snippet compiled, audited and rewritten, ready to run; or why not.</summary>
    public sealed class PreparedSnippet
    {
        /// <summary>The rewritten assembly.</summary>
        public byte[] Image;

        /// <summary>The answer, when it will not run (does not compile, refused, …).</summary>
        public CodeRun Failed;
    }

    /// <summary>
    /// Compiles a snippet as the body of a method with the runtime's C#
    /// compiler (CodeDom) and runs it. The snippet sees <c>parameters</c>
    /// (a dictionary of the call's Parameters) and returns a value or nothing.
    /// </summary>
    public sealed class CodeDomRunner
    {
        /// <summary>Usings and helper types placed before the snippet's class.</summary>
        public string Preamble = "using System;\nusing System.Collections.Generic;\nusing System.Linq;\n";

        /// <summary>What the snippet logged, read from its assembly after it ran (null: nothing).</summary>
        public Func<Assembly, List<string>> Logs;

        /// <summary>Types the Editor's preamble declares (not the snippet's: the audit of its own types passes them).</summary>
        public List<string> PreambleTypes = new List<string>();

        /// <summary>Assemblies the snippet may use (paths or names).</summary>
        public List<string> References = new List<string> { "System.dll", "System.Core.dll" };

        /// <summary>
        /// Compiles (within the compile time limit), audits at Restricted and
        /// rewrites the snippet; any thread.
        /// </summary>
        public PreparedSnippet Prepare(string code, DynamicCodeSecurityLevel level, SnippetLimits limits, DateTime deadline)
        {
            var left = deadline - DateTime.UtcNow;
            var limit = left < limits.CompileTime ? left : limits.CompileTime;
            byte[] image;
            var failed = Compile(code, limit, out image);
            if (failed != null)
            {
                return new PreparedSnippet { Failed = failed };
            }
            try
            {
                if (level == DynamicCodeSecurityLevel.Restricted)
                {
                    var violation = RestrictedCode.Violation(image, References, PreambleTypes);
                    if (violation != null)
                    {
                        return new PreparedSnippet { Failed = new CodeRun { ErrorMessage = RestrictedCode.Refusal(violation) } };
                    }
                }
                else
                {
                    var unsafeAnywhere = RestrictedCode.UnsafeAtEveryLevel(image);
                    if (unsafeAnywhere != null)
                    {
                        return new PreparedSnippet { Failed = new CodeRun { ErrorMessage = RestrictedCode.Refusal(unsafeAnywhere, level) } };
                    }
                }
                return new PreparedSnippet { Image = SnippetRewriter.Rewrite(image, limits.AllocationBytes >= 0, PreambleTypes) };
            }
            catch (Exception e) when (!(e is OutOfMemoryException))
            {
                // Cecil could not read or write what the compiler made.
                return new PreparedSnippet { Failed = new CodeRun { ErrorMessage = "The compiled snippet could not be checked, so it is not run: " + e.GetType().Name + ": " + e.Message } };
            }
        }

        /// <summary>Compiles (within <paramref name="limit"/>); null and the image, or the failed answer.</summary>
        public CodeRun Compile(string code, TimeSpan limit, out byte[] image)
        {
            image = null;
            var header = Preamble + "public static class McpDynamicCode\n{\n    public static object Run(System.Collections.Generic.Dictionary<string, object> parameters)\n    {\n#line 1\n";
            var source = header + code + "\n#line default\n        return null;\n    }\n}\n";
            // To a file, not into memory: the bytes are read (and audited)
            // before anything is loaded.
            var output = Path.Combine(Path.GetTempPath(), "McpDynamicCode-" + Guid.NewGuid().ToString("N") + ".dll");
            var references = References.ToArray();
            var compiling = Task.Run(() =>
            {
                try
                {
                    using (var provider = CodeDomProvider.CreateProvider("CSharp"))
                    {
                        var options = new CompilerParameters { GenerateInMemory = false, OutputAssembly = output, GenerateExecutable = false, TreatWarningsAsErrors = false, WarningLevel = 0 };
                        options.ReferencedAssemblies.AddRange(references);
                        var compiled = provider.CompileAssemblyFromSource(options, source);
                        var bytes = File.Exists(output) ? File.ReadAllBytes(output) : null;
                        return Tuple.Create(compiled, bytes);
                    }
                }
                finally
                {
                    try
                    {
                        File.Delete(output);
                    }
                    catch (Exception)
                    {
                        // A temporary file left behind.
                    }
                }
            });
            if (!compiling.Wait(limit < TimeSpan.Zero ? TimeSpan.Zero : limit))
            {
                // It goes on in the background; its result is dropped.
                compiling.ContinueWith(t => t.Exception, TaskContinuationOptions.OnlyOnFaulted);
                return new CodeRun { Stopped = SnippetStop.Deadline, ErrorMessage = "the C# compiler did not finish with the snippet within " + ToolSchema.Number(Math.Max(0, limit.TotalSeconds)) + " s, so it was not run" };
            }
            if (compiling.IsFaulted)
            {
                var e = compiling.Exception.GetBaseException();
                return new CodeRun { ErrorMessage = "The C# compiler could not be started, so this Editor cannot run dynamic code: " + e.Message };
            }
            var result = compiling.Result;
            var errors = result.Item1.Errors.Cast<CompilerError>().Where(e => !e.IsWarning).ToList();
            if (errors.Count > 0)
            {
                var failed = new CodeRun { ErrorMessage = "Compilation failed" };
                foreach (var e in errors)
                {
                    failed.Errors.Add(new CodeError { Message = e.ErrorText, Line = e.Line, Column = e.Column, ErrorCode = e.ErrorNumber });
                }
                return failed;
            }
            if (result.Item2 == null)
            {
                return new CodeRun { ErrorMessage = "The C# compiler reported no errors but wrote no assembly" };
            }
            image = result.Item2;
            return null;
        }

        /// <summary>
        /// Runs a prepared snippet on this thread (Unity's main thread, for
        /// Unity's APIs) within its budgets; what it returned, or how it stopped.
        /// </summary>
        public CodeRun Execute(PreparedSnippet snippet, JObject parameters, SnippetLimits limits, DateTime deadline)
        {
            var values = new Dictionary<string, object>();
            foreach (var property in parameters.Properties())
            {
                values[property.Name] = property.Value is JValue ? ((JValue)property.Value).Value : property.Value.ToString(Newtonsoft.Json.Formatting.None);
            }
            // The guard's deadline comes a little before the call's, so the
            // snippet's own stop, not the dispatcher's, answers it.
            var left = deadline - DateTime.UtcNow;
            var margin = TimeSpan.FromMilliseconds(Math.Min(100, Math.Max(0, left.TotalMilliseconds) / 20));
            Assembly assembly = null;
            List<string> logs = null;
            CodeRun run;
            using (SnippetGuard.Begin(limits, left - margin))
            {
                try
                {
                    assembly = Assembly.Load(snippet.Image);
                    var value = assembly.GetType("McpDynamicCode").GetMethod("Run").Invoke(null, new object[] { values });
                    run = new CodeRun { Success = true, Result = value == null ? "" : Text(value) };
                    logs = Logs != null ? Logs(assembly) : null;
                }
                catch (Exception e) when (e is TargetInvocationException || e is TypeInitializationException || e is SnippetStoppedException)
                {
                    var stopped = StoppedIn(e);
                    if (stopped != null)
                    {
                        run = new CodeRun { Stopped = stopped.Why, ErrorMessage = stopped.Message };
                    }
                    else
                    {
                        var inner = e.InnerException ?? e;
                        run = new CodeRun { ErrorMessage = inner.GetType().Name + ": " + inner.Message };
                    }
                }
                finally
                {
                    if (logs == null && Logs != null && assembly != null)
                    {
                        try
                        {
                            logs = Logs(assembly);
                        }
                        catch (Exception e) when (e is TypeInitializationException || e is NullReferenceException || e is TargetInvocationException || e is SnippetStoppedException)
                        {
                            logs = null;
                        }
                    }
                    Forget(assembly, PreambleTypes);
                }
                // Stopped, whatever it did after: a catch of its own that
                // returned does not make its answer a result.
                var verdict = SnippetGuard.Verdict;
                if (verdict != null)
                {
                    run = new CodeRun { Stopped = verdict.Why, ErrorMessage = verdict.Message };
                }
            }
            if (logs != null)
            {
                run.Logs = logs;
            }
            return run;
        }

        /// <summary>Everything on this thread: prepared, then run (tests and tools without a main thread).</summary>
        public CodeRun Run(string code, JObject parameters, bool compileOnly, DynamicCodeSecurityLevel level, TimeSpan? timeout = null)
        {
            var limits = SnippetLimits.For(level);
            var deadline = DateTime.UtcNow + (timeout ?? TimeSpan.FromSeconds(60));
            var prepared = Prepare(code, level, limits, deadline);
            if (prepared.Failed != null)
            {
                return prepared.Failed;
            }
            return compileOnly ? new CodeRun { Success = true } : Execute(prepared, parameters, limits, deadline);
        }

        /// <summary>The stop behind an exception, however wrapped.</summary>
        static SnippetStoppedException StoppedIn(Exception e)
        {
            for (var current = e; current != null; current = current.InnerException)
            {
                var stopped = current as SnippetStoppedException;
                if (stopped != null)
                {
                    return stopped;
                }
            }
            return null;
        }

        /// <summary>
        /// The snippet's static fields let go (its assembly cannot be
        /// unloaded, but what its statics held can be collected).
        /// </summary>
        static void Forget(Assembly assembly, List<string> preambleTypes)
        {
            if (assembly == null)
            {
                return;
            }
            try
            {
                foreach (var type in assembly.GetTypes())
                {
                    if (type.IsGenericTypeDefinition || preambleTypes.Contains(type.FullName))
                    {
                        continue;
                    }
                    foreach (var field in type.GetFields(BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly))
                    {
                        if (!field.IsLiteral && !field.FieldType.IsValueType)
                        {
                            field.SetValue(null, null);
                        }
                    }
                }
            }
            catch (Exception e) when (e is ReflectionTypeLoadException || e is TypeInitializationException || e is TargetInvocationException || e is FieldAccessException || e is ArgumentException)
            {
                // A type that never loaded holds nothing.
            }
        }

        /// <summary>A value as C#'s ToString shows it (true, not True; invariant numbers).</summary>
        static string Text(object value)
        {
            if (value is bool)
            {
                return (bool)value ? "true" : "false";
            }
            var formattable = value as IFormattable;
            return formattable != null ? formattable.ToString(null, System.Globalization.CultureInfo.InvariantCulture) : value.ToString();
        }
    }
}
