// execute-dynamic-code's Restricted level, on real compiled code: attempts
// to reach the file system, processes, the network, reflection, threads or
// native code, written to get past a check of the source text, are each
// refused before they run; ordinary snippets run.

using System;
using System.Collections.Generic;
using System.Linq;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using UnityMcp.Core;

namespace UnityMcp.Core.Tests
{
    [TestFixture]
    public class RestrictedCodeTests
    {
        /// <summary>Snippets that must be refused: a name, and the code.</summary>
        public static readonly string[][] Bypasses =
        {
            new[] { "file read", "return System.IO.File.ReadAllText(\"/etc/passwd\");" },
            new[] { "file via using alias", "return IOF.Exists(\"/etc/passwd\");", "using IOF = System.IO.File;" },
            new[] { "unicode escape in identifier", "return Sys\\u0074em.IO.File.Exists(\"/tmp\");" },
            new[] { "unicode escape of the type", "return System.IO.\\u0046ile.Exists(\"/tmp\");" },
            new[] { "directory listing", "return System.IO.Directory.GetFiles(\"/\").Length;" },
            new[] { "file info", "return new System.IO.FileInfo(\"/etc/hosts\").Length;" },
            new[] { "stream writer", "using (var w = new System.IO.StreamWriter(\"/tmp/x\")) { w.Write(1); } return 1;" },
            new[] { "path", "return System.IO.Path.GetTempPath();" },
            new[] { "process start", "System.Diagnostics.Process.Start(\"sh\", \"-c true\"); return 1;" },
            new[] { "process list", "return System.Diagnostics.Process.GetProcesses().Length;" },
            new[] { "web client", "return new System.Net.WebClient().DownloadString(\"http://127.0.0.1/\");" },
            new[] { "socket", "var s = new System.Net.Sockets.TcpClient(); return s.Connected;" },
            new[] { "dns", "return System.Net.Dns.GetHostName();" },
            new[] { "type by string", "return Type.GetType(\"System.IO.File\") != null;" },
            new[] { "type by concatenated string", "var n = \"System.IO.\" + \"File\"; return Type.GetType(n);" },
            new[] { "activator", "return Activator.CreateInstance(typeof(System.Text.StringBuilder));" },
            new[] { "activator by string", "return Activator.CreateInstance(\"mscorlib\", \"System.Object\");" },
            new[] { "app domain", "return AppDomain.CurrentDomain.GetAssemblies().Length;" },
            new[] { "assembly load", "return System.Reflection.Assembly.Load(\"System\").FullName;" },
            new[] { "assembly of a type", "return typeof(string).Assembly.FullName;" },
            new[] { "get method and invoke", "return typeof(string).GetMethod(\"Copy\").Invoke(null, new object[] { \"a\" });" },
            new[] { "get type then members", "return \"\".GetType().GetMethods().Length;" },
            new[] { "invoke member", "return typeof(Math).InvokeMember(\"Abs\", System.Reflection.BindingFlags.InvokeMethod, null, null, new object[] { -1 });" },
            new[] { "delegate by name", "return Delegate.CreateDelegate(typeof(Func<string>), \"x\", \"ToString\");" },
            new[] { "dynamic", "dynamic d = 1; return d + 1;" },
            new[] { "expression compile", "System.Linq.Expressions.Expression<Func<int>> e = () => 1; return e.Compile()();" },
            new[] { "marshal", "return System.Runtime.InteropServices.Marshal.SizeOf(typeof(int));" },
            new[] { "dll import", "return Native.getpid();", "", "static class Native { [System.Runtime.InteropServices.DllImport(\"libc\")] public static extern int getpid(); }" },
            new[] { "environment exit", "Environment.Exit(0); return 1;" },
            new[] { "environment variables", "return Environment.GetEnvironmentVariable(\"HOME\");" },
            new[] { "thread", "new System.Threading.Thread(() => { }).Start(); return 1;" },
            new[] { "thread pool", "System.Threading.ThreadPool.QueueUserWorkItem(_ => { }); return 1;" },
            new[] { "generic argument", "var l = new List<System.IO.FileInfo>(); return l.Count;" },
            new[] { "if false verbatim trick", "#if false\nvar s = @\"\n#endif\nreturn System.IO.File.Exists(\"/\");\n#if false\n\";\n#endif" },
            new[] { "console stream", "return Console.OpenStandardOutput().CanWrite;" },
            new[] { "registry-like environment", "return Environment.MachineName;" },
        };

        /// <summary>Snippets Restricted must run.</summary>
        public static readonly string[][] Allowed =
        {
            new[] { "arithmetic", "return 40 + 2;", "42" },
            new[] { "strings", "return string.Join(\",\", new[] { \"a\", \"b\" }).ToUpperInvariant();", "A,B" },
            new[] { "linq", "return Enumerable.Range(1, 4).Where(i => i % 2 == 0).Sum();", "6" },
            new[] { "collections", "var d = new Dictionary<string, int> { [\"a\"] = 1 }; return d[\"a\"] + new List<int> { 2 }[0];", "3" },
            new[] { "string builder and interpolation", "var b = new System.Text.StringBuilder(); b.Append($\"{1 + 1}\"); return b.ToString();", "2" },
            new[] { "math and formatting", "return Math.Round(2.5, MidpointRounding.AwayFromZero).ToString(System.Globalization.CultureInfo.InvariantCulture);", "3" },
            new[] { "regex", "return System.Text.RegularExpressions.Regex.IsMatch(\"abc\", \"b\");", "true" },
            new[] { "typeof and names", "return typeof(List<int>).Name;", "List`1" },
            new[] { "parameters", "return parameters.Count;", "0" },
            new[] { "lambda and exception", "Func<int, int> f = x => x * 2; try { throw new InvalidOperationException(\"x\"); } catch (InvalidOperationException) { return f(21); }", "42" },
        };

        static CodeRun Run(string[] attempt, DynamicCodeSecurityLevel level)
        {
            var runner = new CodeDomRunner();
            if (attempt.Length > 2 && attempt[2].Length > 0 && attempt[2].StartsWith("using", StringComparison.Ordinal))
            {
                runner.Preamble += attempt[2] + "\n";
            }
            if (attempt.Length > 3)
            {
                runner.Preamble += attempt[3] + "\n";
            }
            runner.References.Add("Microsoft.CSharp.dll");
            return runner.Run(attempt[1], new JObject(), false, level);
        }

        [Test]
        public void EveryBypassAttemptIsRefusedBeforeItRuns()
        {
            var refused = new List<string>();
            var through = new List<string>();
            foreach (var attempt in Bypasses)
            {
                var run = Run(attempt, DynamicCodeSecurityLevel.Restricted);
                if (!run.Success && run.ErrorMessage.StartsWith("Security violation", StringComparison.Ordinal))
                {
                    refused.Add(attempt[0]);
                }
                else
                {
                    through.Add(attempt[0] + ": " + (run.Success ? "ran, " + run.Result : run.ErrorMessage + " " + string.Join("; ", run.Errors.Select(e => e.Message))));
                }
            }
            Console.WriteLine("Restricted: " + refused.Count + " of " + Bypasses.Length + " bypass attempts refused");
            Assert.IsEmpty(through, "got past Restricted (or did not compile, which proves nothing)");
            Assert.GreaterOrEqual(Bypasses.Length, 30);
        }

        [Test]
        public void OrdinarySnippetsRunAtRestricted()
        {
            foreach (var snippet in Allowed)
            {
                var run = Run(snippet, DynamicCodeSecurityLevel.Restricted);
                Assert.IsTrue(run.Success, snippet[0] + ": " + run.ErrorMessage + " " + string.Join("; ", run.Errors.Select(e => e.Message)));
                Assert.AreEqual(snippet[2], run.Result, snippet[0]);
            }
        }

        [Test]
        public void FullAccessRunsWhatRestrictedRefuses()
        {
            var run = Run(new[] { "path", "return System.IO.Path.Combine(\"a\", \"b\");" }, DynamicCodeSecurityLevel.FullAccess);
            Assert.IsTrue(run.Success, run.ErrorMessage);
            Assert.AreEqual(System.IO.Path.Combine("a", "b"), run.Result);
        }
    }
}
