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

        /// <summary>The thread that pumps (-1 until it first does).</summary>
        int mainThread = -1;

        /// <summary>Makes the calling thread the main thread before its first pump.</summary>
        public void BindToCurrentThread()
        {
            mainThread = System.Threading.Thread.CurrentThread.ManagedThreadId;
        }

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

        /// <summary>Runs <paramref name="body"/> on the main thread (at once when called there); its result.</summary>
        public Task<T> Run<T>(Func<T> body)
        {
            if (System.Threading.Thread.CurrentThread.ManagedThreadId == mainThread)
            {
                // Already there: waiting for the next pump would wait forever.
                try
                {
                    return Task.FromResult(body());
                }
                catch (Exception e)
                {
                    var failed = new TaskCompletionSource<T>();
                    failed.SetException(e);
                    return failed.Task;
                }
            }
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

        /// <summary>
        /// Called (on the queuing thread) when work arrives, so a host whose
        /// main thread idles (an unfocused Editor) can wake it.
        /// </summary>
        public Action Wake { get; set; } = delegate { };

        void Enqueue(Action action)
        {
            lock (gate)
            {
                work.Enqueue(action);
            }
            Wake();
        }

        /// <summary>Runs what is queued now (not what that queues); how many ran.</summary>
        public int Pump()
        {
            mainThread = System.Threading.Thread.CurrentThread.ManagedThreadId;
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
