// The main-thread queue: Unity's APIs may only be called on the Editor's
// main thread, while requests arrive on socket threads. Work is queued here
// and run by Pump(), which the Editor layer calls from
// EditorApplication.update (kept ticking while the Editor is unfocused).

using System;
using System.Collections.Generic;
using System.Threading.Tasks;

namespace UnityMcp.Core
{
    /// <summary>Runs work on the thread that calls <see cref="Pump"/>.</summary>
    public sealed class MainThreadQueue
    {
        readonly object gate = new object();
        readonly Queue<Action> work = new Queue<Action>();

        /// <summary>Work waiting for the next pump.</summary>
        public int Pending
        {
            get
            {
                lock (gate)
                {
                    return work.Count;
                }
            }
        }

        /// <summary>Runs <paramref name="body"/> on the main thread; its result.</summary>
        public Task<T> Run<T>(Func<T> body)
        {
            var done = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
            Enqueue(() =>
            {
                try
                {
                    done.SetResult(body());
                }
                catch (Exception e)
                {
                    done.SetException(e);
                }
            });
            return done.Task;
        }

        void Enqueue(Action action)
        {
            lock (gate)
            {
                work.Enqueue(action);
            }
        }

        /// <summary>Runs what is queued now (not what that queues); how many ran.</summary>
        public int Pump()
        {
            Action[] now;
            lock (gate)
            {
                now = work.ToArray();
                work.Clear();
            }
            foreach (var action in now)
            {
                action();
            }
            return now.Length;
        }
    }
}
