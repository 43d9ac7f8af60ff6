// The headless host's Editor, its tests: the Test Framework's runs, EditMode
// where they are asked and PlayMode across the domain reload of entering
// play mode, as Unity's Test Framework runs them (the rest of the model is
// in ModelEditor.cs).

using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using UnityMcp.Core;

namespace UnityMcp.Host
{
    public sealed partial class ModelEditor
    {
        public async Task<List<TestResult>> RunTests(TestSelection selection, ToolContext context)
        {
            MainThreadOnly("TestRunnerApi.Execute");
            var selected = Selected(selection);
            if (selection.Mode != TestMode.PlayMode)
            {
                return await Run(selected, (done, name) => context.Progress(done, selected.Count, name), context.Cancellation);
            }
            // The Test Framework enters play mode for a PlayMode run and
            // leaves it after the run's result.
            bool entered;
            lock (gate)
            {
                entered = !playing;
                playing = true;
                paused = false;
            }
            if (entered && ReloadsDomain())
            {
                // The domain reloads: the run goes on in the next one, whose
                // callbacks (registered at its load) are told of it; this
                // call's task dies with this domain.
                _ = Task.Run(() => GoOnAfterReload(selected));
                await Task.Delay(Timeout.Infinite, context.Cancellation);
            }
            try
            {
                return await Run(selected, (done, name) => context.Progress(done, selected.Count, name), context.Cancellation);
            }
            finally
            {
                ExitPlayMode(entered);
            }
        }

        /// <summary>The Test Framework's run after the reload: in the next domain, telling its callbacks.</summary>
        async Task GoOnAfterReload(List<TestResult> selected)
        {
            try
            {
                await Reload();
                var callbacks = TestRunCallbacks;
                var results = await Run(selected, (done, name) => callbacks.TestFinished(name), CancellationToken.None);
                callbacks.RunFinished(results);
            }
            catch (Exception e)
            {
                Console.Error.WriteLine("the PlayMode run after the reload failed: " + e);
            }
            finally
            {
                ExitPlayMode(true);
            }
        }

        void ExitPlayMode(bool entered)
        {
            if (!entered)
            {
                return;
            }
            lock (gate)
            {
                playing = false;
                paused = false;
            }
        }

        /// <summary>The selected tests, each taking its time.</summary>
        static async Task<List<TestResult>> Run(List<TestResult> selected, Action<int, string> finished, CancellationToken cancellation)
        {
            for (var i = 0; i < selected.Count; i++)
            {
                await Task.Delay((int)selected[i].DurationMs, cancellation);
                finished(i + 1, selected[i].FullName);
            }
            return selected;
        }

        /// <summary>The state's tests a selection takes, in the state's order.</summary>
        List<TestResult> Selected(TestSelection selection)
        {
            var mode = selection.Mode.ToString();
            return Array("tests")
                .Where(t => (string)t["mode"] == mode)
                .Select(t => new TestResult
                {
                    FullName = (string)t["fullName"],
                    Assembly = (string)t["assembly"],
                    Outcome = (TestOutcome)Enum.Parse(typeof(TestOutcome), (string)t["outcome"]),
                    DurationMs = (long?)t["durationMs"] ?? 0,
                    Message = (string)t["message"] ?? "",
                    StackTrace = (string)t["stackTrace"] ?? "",
                })
                .Where(t => RunTestsTool.Selects(selection, t))
                .ToList();
        }
    }

    /// <summary>What Unity's Test Framework tells the callbacks a domain registered (ICallbacks: TestFinished, RunFinished).</summary>
    public interface ITestRunCallbacks
    {
        void TestFinished(string fullName);

        void RunFinished(List<TestResult> results);
    }
}
