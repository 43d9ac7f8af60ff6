// PlayMode test runs that go on after the domain reload entering play mode
// makes (Unity's default Enter Play Mode settings). The Test Framework
// keeps its run across the reload and finishes it in the new domain, but
// the callbacks a call registered, and the call's own task, die with the
// old one. So a run-tests call that will meet such a reload is journaled
// as carried (RunTestsTool), and each domain has one PlayModeRuns that the
// Editor layer's callbacks, registered when the domain loads
// (PlayModeRunCallbacks.cs, as the Test Framework's manual says to), tell
// of the run: its tests as they finish, its results at the end. It answers
// the carried call in the journal, where the client's resent request
// (x-resume) finds it; a resent request that arrives first waits, told the
// run's progress.
//
// The alternative, uLoopMCP's, turns domain reload off for the run and
// restores it: it changes how the user's tests run (statics kept) and, when
// the Editor dies mid-run, leaves the project's settings changed
// (docs/package.md says why this package does not).

using System;
using System.Collections.Generic;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    /// <summary>This domain's PlayMode runs carried from an earlier one.</summary>
    public sealed class PlayModeRuns
    {
        readonly object gate = new object();
        readonly List<Action<double, double?, string>> followers = new List<Action<double, double?, string>>();

        /// <summary>This domain's dispatcher, once its server has started.</summary>
        Dispatcher dispatcher;

        /// <summary>A run that finished before the server started.</summary>
        List<TestResult> finished;

        /// <summary>Tests finished in this domain in the current run.</summary>
        int testsDone;

        /// <summary>A test of the run finished (on the Test Framework's thread).</summary>
        public void TestFinished(string fullName)
        {
            Action<double, double?, string>[] tell;
            int done;
            lock (gate)
            {
                done = ++testsDone;
                tell = followers.ToArray();
            }
            foreach (var progress in tell)
            {
                progress(done, null, fullName);
            }
        }

        /// <summary>The run finished: its tests' results, in run order.</summary>
        public void RunFinished(List<TestResult> results)
        {
            Dispatcher answering;
            lock (gate)
            {
                testsDone = 0;
                answering = dispatcher;
                if (answering == null)
                {
                    finished = results;
                    return;
                }
            }
            Answer(answering, results);
        }

        /// <summary>This domain's server has started: a run that finished meanwhile is answered now.</summary>
        internal void TakeUp(Dispatcher started)
        {
            List<TestResult> results;
            lock (gate)
            {
                dispatcher = started;
                results = finished;
                finished = null;
            }
            if (results != null)
            {
                Answer(started, results);
            }
        }

        /// <summary>Tells <paramref name="progress"/> of each test that finishes until disposed.</summary>
        public IDisposable Follow(Action<double, double?, string> progress)
        {
            lock (gate)
            {
                followers.Add(progress);
            }
            return new Unfollow(this, progress);
        }

        /// <summary>
        /// Answers, in the journal, each run-tests call another domain carried
        /// (there is one run at a time; a run nobody carried, the user's own,
        /// answers nothing).
        /// </summary>
        static void Answer(Dispatcher dispatcher, List<TestResult> results)
        {
            var journal = dispatcher.Journal;
            if (journal == null)
            {
                return;
            }
            foreach (var call in journal.CarriedFromOtherDomains(dispatcher.ServerSessionId))
            {
                if (call.Method != RunTestsTool.Name)
                {
                    continue;
                }
                JObject response;
                try
                {
                    var result = RunTestsTool.AnswerCarried(call.State, results, dispatcher.Backend);
                    response = dispatcher.Response(call.Id, ToolResults.ToJson(result));
                }
                catch (Exception e)
                {
                    response = JObject.Parse(System.Text.Encoding.UTF8.GetString(RpcWriter.Error(call.Id, new RpcError(RpcErrorKind.InternalError, call.Method + " failed: " + e.Message))));
                }
                journal.Completed(call.Id, call.Method, response);
            }
        }

        sealed class Unfollow : IDisposable
        {
            readonly PlayModeRuns runs;
            readonly Action<double, double?, string> progress;

            public Unfollow(PlayModeRuns runs, Action<double, double?, string> progress)
            {
                this.runs = runs;
                this.progress = progress;
            }

            public void Dispose()
            {
                lock (runs.gate)
                {
                    runs.followers.Remove(progress);
                }
            }
        }
    }
}
