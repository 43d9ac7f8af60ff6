// What bounding a snippet costs (measure-snippets compiles and runs this):
// an ordinary snippet compiled once, then, N times each, the audit, the IL
// rewriting, and a run of the assembly as compiled and as rewritten. Prints
// one JSON line of medians (milliseconds).

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Reflection;
using UnityMcp.Core;

static class SnippetCost
{
    const string Ordinary = @"
var words = new List<string>();
for (var i = 0; i < 20000; i++) { words.Add(""w"" + (i % 97)); }
var counts = words.GroupBy(w => w).OrderByDescending(g => g.Count()).Take(5).Select(g => g.Key + ""="" + g.Count());
return string.Join("","", counts.ToArray());";

    static double Median(List<double> values)
    {
        values.Sort();
        return values[values.Count / 2];
    }

    static double Time(Action action)
    {
        var watch = Stopwatch.StartNew();
        action();
        return watch.Elapsed.TotalMilliseconds;
    }

    static object RunImage(byte[] image)
    {
        var assembly = Assembly.Load(image);
        return assembly.GetType("McpDynamicCode").GetMethod("Run").Invoke(null, new object[] { new Dictionary<string, object>() });
    }

    public static int Main(string[] args)
    {
        var runs = args.Length > 0 ? int.Parse(args[0]) : 30;
        var runner = new CodeDomRunner();
        var compile = new List<double>();
        byte[] image = null;
        // The compiler's own time, as a snippet pays it (the first warms it).
        for (var i = 0; i < Math.Min(runs, 10) + 1; i++)
        {
            var prepared = (PreparedSnippet)null;
            var t = Time(() => prepared = runner.Prepare(Ordinary, DynamicCodeSecurityLevel.Restricted, SnippetLimits.For(DynamicCodeSecurityLevel.Restricted), DateTime.UtcNow.AddSeconds(60)));
            if (prepared.Failed != null)
            {
                Console.Error.WriteLine(prepared.Failed.ErrorMessage);
                return 1;
            }
            if (i > 0)
            {
                compile.Add(t);
            }
        }
        // The image as compiled, taken from a compile alone.
        image = CompileOnly(runner);
        var audit = new List<double>();
        var rewrite = new List<double>();
        var plain = new List<double>();
        var bounded = new List<double>();
        byte[] rewritten = null;
        var limits = SnippetLimits.For(DynamicCodeSecurityLevel.Restricted);
        for (var i = 0; i < runs; i++)
        {
            audit.Add(Time(() => RestrictedCode.Violation(image, runner.References)));
            rewrite.Add(Time(() => rewritten = SnippetRewriter.Rewrite(image, true)));
            plain.Add(Time(() => RunImage(image)));
            using (SnippetGuard.Begin(limits, TimeSpan.FromSeconds(60)))
            {
                bounded.Add(Time(() => RunImage(rewritten)));
            }
        }
        Console.WriteLine("{\"runs\":" + runs
            + ",\"prepare_ms\":" + Median(compile).ToString("0.0", System.Globalization.CultureInfo.InvariantCulture)
            + ",\"audit_ms\":" + Median(audit).ToString("0.00", System.Globalization.CultureInfo.InvariantCulture)
            + ",\"rewrite_ms\":" + Median(rewrite).ToString("0.00", System.Globalization.CultureInfo.InvariantCulture)
            + ",\"run_ms\":" + Median(plain).ToString("0.00", System.Globalization.CultureInfo.InvariantCulture)
            + ",\"run_rewritten_ms\":" + Median(bounded).ToString("0.00", System.Globalization.CultureInfo.InvariantCulture) + "}");
        return 0;
    }

    /// <summary>The snippet compiled and nothing else: the image the audit and the rewriter take.</summary>
    static byte[] CompileOnly(CodeDomRunner runner)
    {
        byte[] image;
        var failed = runner.Compile(Ordinary, TimeSpan.FromSeconds(60), out image);
        if (failed != null)
        {
            throw new InvalidOperationException(failed.ErrorMessage);
        }
        return image;
    }
}
