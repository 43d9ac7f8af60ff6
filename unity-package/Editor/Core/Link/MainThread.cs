// The main-thread queue: Unity's APIs may only be called on the Editor's
// main thread, while requests arrive on socket threads. Work is queued here
// and run by Pump(), which the Editor layer calls from
// EditorApplication.update (kept ticking while the Editor is unfocused).
//
// It also says, from any thread, how the main thread is doing
// (get-editor-state, extension editor-state): when it last came to the
// queue and how long the oldest work has waited for it, on a monotonic
// clock. Work leaves the queue only as it starts, so work a pump has yet
// to reach (behind one held by a modal dialog) still counts as waiting.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace UnityMcp.Core
{
    /// <summary>Runs work on the thread that calls <see cref="Pump"/>.</summary>
    public sealed class MainThreadQueue
    {
        readonly object gate = new object();
        readonly Queue<Queued> work = new Queue<Queued>();
        readonly Func<long> clock;

        /// <summary>When the main thread last came to the queue (<see cref="clock"/>, ms).</summary>
        long lastRan;

        struct Queued
        {
            public Action Action;
            public long Since;
        }

        /// <summary>A queue on a monotonic clock (Stopwatch).</summary>
        public MainThreadQueue() : this(MonotonicMilliseconds)
        {
        }

        /// <summary>A queue on <paramref name="clock"/>: milliseconds that never go back (tests give their own).</summary>
        public MainThreadQueue(Func<long> clock)
        {
            this.clock = clock;
            lastRan = clock();
        }

        /// <summary>Milliseconds on Stopwatch's monotonic clock.</summary>
        public static long MonotonicMilliseconds() => (long)(Stopwatch.GetTimestamp() * (1000.0 / Stopwatch.Frequency));

        /// <summary>The thread that pumps (-1 until it first does).</summary>
        int mainThread = -1;

        /// <summary>Makes the calling thread the main thread before its first pump.</summary>
        public void BindToCurrentThread()
        {
            mainThread = System.Threading.Thread.CurrentThread.ManagedThreadId;
        }

        /// <summary>Work waiting for the main thread (not yet started).</summary>
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

        /// <summary>
        /// How the main thread is doing now, from any thread: work waiting,
        /// how long the oldest has waited, how long since the main thread
        /// last came to the queue (a pump began, or finished a piece of work).
        /// </summary>
        public MainThreadReport Report()
        {
            lock (gate)
            {
                var now = clock();
                return new MainThreadReport
                {
                    Queued = work.Count,
                    OldestQueuedMs = work.Count > 0 ? Math.Max(0, now - work.Peek().Since) : 0,
                    LastRanMsAgo = Math.Max(0, now - lastRan),
                };
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
                work.Enqueue(new Queued { Action = action, Since = clock() });
            }
            Wake();
        }

        /// <summary>Runs what is queued now (not what that queues); how many ran.</summary>
        public int Pump()
        {
            mainThread = System.Threading.Thread.CurrentThread.ManagedThreadId;
            int count;
            lock (gate)
            {
                count = work.Count;
                lastRan = clock();
            }
            var ran = 0;
            while (ran < count)
            {
                Action action;
                lock (gate)
                {
                    if (work.Count == 0)
                    {
                        // A pump inside one of these actions ran the rest.
                        break;
                    }
                    action = work.Dequeue().Action;
                }
                try
                {
                    action();
                }
                finally
                {
                    ran++;
                    lock (gate)
                    {
                        lastRan = clock();
                    }
                }
            }
            return ran;
        }
    }

    /// <summary>What <see cref="MainThreadQueue.Report"/> says (get-editor-state's first members).</summary>
    public struct MainThreadReport
    {
        /// <summary>Work waiting for the main thread.</summary>
        public int Queued;

        /// <summary>How long the oldest of it has waited, in ms; 0 when none.</summary>
        public long OldestQueuedMs;

        /// <summary>ms since the main thread last came to the queue.</summary>
        public long LastRanMsAgo;
    }
}
