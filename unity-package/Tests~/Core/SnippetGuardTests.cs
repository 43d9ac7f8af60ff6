// The budgets that bound a snippet at every level, on real compiled and
// rewritten snippets run in this process: the deadline, the steps, the
// nesting, the allocations; a stop caught by the snippet still stops it;
// nothing of a snippet runs after its call; library calls without end get
// a bound. (The hostile corpus runs the same through the headless host.)

using System;
using System.Diagnostics;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using UnityMcp.Core;

namespace UnityMcp.Core.Tests
{
    [TestFixture]
    public class SnippetGuardTests
    {
        /// <summary>
        /// Compiles <c>code</c> without hurry, then runs it with <c>seconds</c>
        /// to go: what these tests check is what bounds the run, and a loaded
        /// machine's compiler must not eat the run's second. (The call's one
        /// deadline over compile and run is the dispatcher's, tested with it.)
        /// </summary>
        static CodeRun Run(string code, DynamicCodeSecurityLevel level = DynamicCodeSecurityLevel.Restricted, double seconds = 1)
        {
            var runner = new CodeDomRunner();
            var limits = SnippetLimits.For(level);
            var prepared = runner.Prepare(code, level, limits, DateTime.UtcNow + TimeSpan.FromMinutes(2));
            if (prepared.Failed != null)
            {
                return prepared.Failed;
            }
            return runner.Execute(prepared, new JObject(), limits, DateTime.UtcNow + TimeSpan.FromSeconds(seconds));
        }

        [Test]
        public void AnEndlessLoopIsStoppedAtItsDeadlineAtEveryLevel()
        {
            foreach (var level in new[] { DynamicCodeSecurityLevel.Restricted, DynamicCodeSecurityLevel.FullAccess })
            {
                var watch = Stopwatch.StartNew();
                var run = Run("while (true) { }", level);
                // At Restricted its steps may run out before its second does.
                Assert.IsTrue(run.Stopped == SnippetStop.Deadline || level == DynamicCodeSecurityLevel.Restricted && run.Stopped == SnippetStop.Steps, level + ": " + run.ErrorMessage);
                StringAssert.StartsWith("the snippet was stopped", run.ErrorMessage);
                Assert.Less(watch.Elapsed.TotalSeconds, 30, "stopped, not left to run");
            }
        }

        [Test]
        public void ASnippetThatCatchesItsStopIsStoppedAllTheSame()
        {
            var run = Run("try { while (true) { } } catch (Exception) { } return \"escaped\";", DynamicCodeSecurityLevel.FullAccess);
            Assert.AreEqual(SnippetStop.Deadline, run.Stopped, run.ErrorMessage);
            Assert.AreEqual("", run.Result);
            run = Run("while (true) { try { while (true) { } } catch (Exception) { } }", DynamicCodeSecurityLevel.FullAccess);
            Assert.AreEqual(SnippetStop.Deadline, run.Stopped, run.ErrorMessage);
        }

        [Test]
        public void RecursionIsStoppedBeforeTheStackOverflows()
        {
            var run = Run("return F(0); } static int F(int n) { return F(n + 1) + 1; } static object Y() {", DynamicCodeSecurityLevel.FullAccess);
            Assert.AreEqual(SnippetStop.Depth, run.Stopped, run.ErrorMessage);
            StringAssert.Contains("before its stack could overflow", run.ErrorMessage);
            // A snippet that catches it at every level unwinds all the same.
            run = Run("return F(0); } static int F(int n) { try { return F(n + 1); } catch (Exception) { return F(n + 1); } } static object Y() {", DynamicCodeSecurityLevel.FullAccess);
            Assert.IsNotNull(run.Stopped, run.ErrorMessage);
        }

        [Test]
        public void NestingIsCountedRightAfterACatch()
        {
            // 200 levels deep, an exception caught at each: the depth comes
            // back with each catch, so 100 rounds never reach 256.
            var run = Run("var total = 0; for (var i = 0; i < 100; i++) { total += F(200); } return total; } static int F(int n) { try { if (n == 0) throw new InvalidOperationException(); return F(n - 1); } catch (InvalidOperationException) { return 1; } } static object Y() {");
            Assert.IsTrue(run.Success, run.ErrorMessage);
            Assert.AreEqual("100", run.Result);
        }

        [Test]
        public void AllocationsAreCountedAtRestrictedOnly()
        {
            var run = Run("return new byte[300 << 20].Length;");
            Assert.AreEqual(SnippetStop.Allocation, run.Stopped, run.ErrorMessage);
            run = Run("var s = \"x\"; while (true) { s += s; }");
            Assert.AreEqual(SnippetStop.Allocation, run.Stopped, run.ErrorMessage);
            run = Run("return new byte[8 << 20].Length;", DynamicCodeSecurityLevel.FullAccess);
            Assert.IsTrue(run.Success, run.ErrorMessage);
        }

        [Test]
        public void StepsAreBudgeted()
        {
            // A hundred million steps at Restricted, long before a minute is out.
            var run = Run("long n = 0; for (var i = 0; i < int.MaxValue; i++) { n += i; } return n;", DynamicCodeSecurityLevel.Restricted, 60);
            Assert.AreEqual(SnippetStop.Steps, run.Stopped, run.ErrorMessage);
        }

        [Test]
        public void LibraryCallsWithoutEndGetABound()
        {
            var run = Run("return System.Text.RegularExpressions.Regex.IsMatch(\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\", \"(a+)+$\");");
            StringAssert.StartsWith("RegexMatchTimeoutException", run.ErrorMessage);
            run = Run("return Enumerable.Repeat(1, int.MaxValue).Count();", DynamicCodeSecurityLevel.FullAccess);
            Assert.IsNotNull(run.Stopped, run.ErrorMessage);
            // Ordinary uses are unchanged.
            Assert.AreEqual("6", Run("return Enumerable.Range(1, 3).Sum();").Result);
            Assert.AreEqual("ac", Run("return System.Text.RegularExpressions.Regex.Replace(\"abc\", \"b\", \"\");").Result);
        }

        [Test]
        public void NothingOfASnippetRunsAfterItsCall()
        {
            var run = Run("Keep.Later = () => { for (var i = 0; i < 10; i++) { } return 1; }; return 1; } } public static class Keep { public static Func<int> Later; }" + " public static class Z { static object Y() {", DynamicCodeSecurityLevel.FullAccess);
            Assert.IsTrue(run.Success, run.ErrorMessage);
            // Its statics were let go: nothing was kept to call.
            var keep = AppDomain.CurrentDomain.GetAssemblies();
            Func<int> later = null;
            foreach (var assembly in keep)
            {
                var type = assembly.GetType("Keep");
                if (type != null && type.GetField("Later") != null)
                {
                    Assert.IsNull(type.GetField("Later").GetValue(null), "the call's statics are cleared");
                }
            }
            // And a delegate that escaped anyway stops at its first step.
            var escaped = new CodeDomRunner();
            var prepared = escaped.Prepare("Func<int> f = () => { for (var i = 0; i < 10; i++) { } return 1; }; return f;", DynamicCodeSecurityLevel.FullAccess, SnippetLimits.For(DynamicCodeSecurityLevel.FullAccess), DateTime.UtcNow.AddSeconds(30));
            Assert.IsNull(prepared.Failed);
            var assemblyOf = System.Reflection.Assembly.Load(prepared.Image);
            using (SnippetGuard.Begin(SnippetLimits.For(DynamicCodeSecurityLevel.FullAccess), TimeSpan.FromSeconds(30)))
            {
                later = (Func<int>)assemblyOf.GetType("McpDynamicCode").GetMethod("Run").Invoke(null, new object[] { new System.Collections.Generic.Dictionary<string, object>() });
                Assert.AreEqual(1, later());
            }
            var after = Assert.Throws<SnippetStoppedException>(() => later());
            Assert.AreEqual(SnippetStop.Ended, after.Why);
        }

        /// <summary>
        /// What the rewriting counts is written in the caller's terms: a
        /// callee's own generic parameter (ToArray&lt;T&gt; returns T[]) in
        /// the caller would be IL the JIT refuses (mono aborts the process).
        /// </summary>
        [Test]
        public void GenericCodeRunsRewrittenAtRestricted()
        {
            var code = "var words = new List<string> { \"b\", \"a\", \"b\" };"
                + "var top = words.GroupBy(w => w).OrderByDescending(g => g.Count()).Select(g => g.Key).ToArray();"
                + "var mine = new Box<string>(top[0]).Many(2);"
                + "return string.Join(\",\", top) + \"|\" + Twice<int>(3).Length + \"|\" + mine.Length;"
                + "} static T[] Twice<T>(T v) { return new[] { v, v }.ToArray(); } } public class Box<T> { T v; public Box(T v) { this.v = v; } public T[] Many(int n) { return Enumerable.Repeat(v, n).ToArray(); } }"
                + " public static class Z { static object Y() {";
            var run = Run(code);
            Assert.IsTrue(run.Success, run.ErrorMessage);
            Assert.AreEqual("b,a|2|2", run.Result);
        }

        [Test]
        public void AFinalizerIsRefusedAtEveryLevel()
        {
            foreach (var level in new[] { DynamicCodeSecurityLevel.Restricted, DynamicCodeSecurityLevel.FullAccess })
            {
                var run = Run("new Bomb(); return 1; } } public class Bomb { ~Bomb() { throw new Exception(); } } public static class Z { static object Y() {", level);
                StringAssert.StartsWith("Security violation", run.ErrorMessage, level.ToString());
                StringAssert.Contains("finalizer", run.ErrorMessage);
            }
        }

        [Test]
        public void WhatASnippetIsDecidesRestrictedNotOnlyWhatItNames()
        {
            var overlay = "var o = new Overlay(); o.Obj = typeof(string); return o.Fake.A; } } [System.Runtime.InteropServices.StructLayout(System.Runtime.InteropServices.LayoutKind.Explicit)] public struct Overlay { [System.Runtime.InteropServices.FieldOffset(0)] public object Obj; [System.Runtime.InteropServices.FieldOffset(0)] public Fake Fake; } public class Fake { public int A; } public static class Z { static object Y() {";
            var run = Run(overlay);
            StringAssert.StartsWith("Security violation", run.ErrorMessage);
            StringAssert.Contains("explicit layout", run.ErrorMessage);
            run = Run("int x = 41; var r = __makeref(x); return __refvalue(r, int) + 1;");
            StringAssert.Contains("typed reference", run.ErrorMessage);
            run = Run("Keep.X = 1; return 1; } } public static class Keep { public static int X; } public static class Z { static object Y() {");
            StringAssert.Contains("static field", run.ErrorMessage);
        }
    }
}
