// The Test Framework's callbacks for PlayMode runs that go on after the
// domain reload of entering play mode (Core/Link/PlayModeRuns.cs). The
// Test Framework keeps its run across the reload but not the callbacks
// registered with it: "The registered callbacks are not persisted on domain
// reloads. So it is necessary to re-register the callback after a domain
// reloads, usually with InitializeOnLoad." (its manual, "Get test
// results"). So these are registered as each domain loads, and tell this
// domain's PlayModeRuns of every run's tests and results; it answers only a
// run an earlier domain carried (a run-tests call cut off by the reload).

using UnityEditor;
using UnityEditor.TestTools.TestRunner.Api;
using UnityEngine;
using UnityMcp.Core;

namespace UnityMcp.Editor
{
    [InitializeOnLoad]
    static class PlayModeRunCallbacks
    {
        static PlayModeRunCallbacks()
        {
            var api = ScriptableObject.CreateInstance<TestRunnerApi>();
            api.RegisterCallbacks(new Reporter(McpServerController.PlayModeRuns));
        }

        sealed class Reporter : ICallbacks
        {
            readonly PlayModeRuns runs;

            public Reporter(PlayModeRuns runs)
            {
                this.runs = runs;
            }

            public void RunStarted(ITestAdaptor testsToRun)
            {
            }

            public void RunFinished(ITestResultAdaptor result)
            {
                runs.RunFinished(UnityEditorBackend.TestCallbacks.ResultsOf(result));
            }

            public void TestStarted(ITestAdaptor test)
            {
            }

            public void TestFinished(ITestResultAdaptor result)
            {
                if (!result.HasChildren)
                {
                    runs.TestFinished(result.Test.FullName);
                }
            }
        }
    }
}
