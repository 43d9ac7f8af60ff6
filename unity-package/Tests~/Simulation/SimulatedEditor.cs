// Unity's main thread, as the Editor runs it, for the headless host and the
// core's tests: the package runs here exactly as it would in Unity, so what
// deadlocks or stalls there deadlocks or stalls here.
//
// - SynchronizationContext.Current on the main thread is a copy of Unity's
//   UnitySynchronizationContext (UnityCsReference 6000.0,
//   Runtime/Export/Scripting/UnitySynchronizationContext.cs): Post only
//   appends to a list; the Editor empties it once per tick (ExecuteTasks);
//   Send from another thread posts and blocks until that tick. So an await
//   on the main thread without ConfigureAwait(false) resumes only at the
//   next tick, and never while the main thread is blocked.
// - Each tick: the posted work, then EditorApplication.update, then the
//   delayCall queue (Editor/Mono/EditorApplication.cs: delayCall runs from
//   the update loop once, after what is queued now).
// - A domain reload calls beforeAssemblyReload on the main thread, then
//   unloads the domain: the work posted and not yet run is lost, and every
//   handler the domain registered goes with it.
// - The quit calls EditorApplication.quitting on the main thread.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace UnityMcp.Simulation
{
    /// <summary>UnitySynchronizationContext, as Unity defines it.</summary>
    public sealed class UnityLikeSynchronizationContext : SynchronizationContext
    {
        readonly List<WorkRequest> queue;
        readonly int mainThreadId;

        public UnityLikeSynchronizationContext(int mainThreadId) : this(new List<WorkRequest>(), mainThreadId)
        {
        }

        UnityLikeSynchronizationContext(List<WorkRequest> queue, int mainThreadId)
        {
            this.queue = queue;
            this.mainThreadId = mainThreadId;
        }

        /// <summary>Work posted and not yet run.</summary>
        public int Pending
        {
            get
            {
                lock (queue)
                {
                    return queue.Count;
                }
            }
        }

        public override void Send(SendOrPostCallback callback, object state)
        {
            if (Thread.CurrentThread.ManagedThreadId == mainThreadId)
            {
                callback(state);
                return;
            }
            using (var done = new ManualResetEvent(false))
            {
                lock (queue)
                {
                    queue.Add(new WorkRequest(callback, state, done));
                }
                done.WaitOne();
            }
        }

        public override void Post(SendOrPostCallback callback, object state)
        {
            lock (queue)
            {
                queue.Add(new WorkRequest(callback, state, null));
            }
        }

        public override SynchronizationContext CreateCopy()
        {
            return new UnityLikeSynchronizationContext(queue, mainThreadId);
        }

        /// <summary>Runs what was posted before this tick (Unity's ExecuteTasks).</summary>
        public void ExecuteTasks()
        {
            WorkRequest[] now;
            lock (queue)
            {
                now = queue.ToArray();
                queue.Clear();
            }
            foreach (var work in now)
            {
                work.Invoke();
            }
        }

        /// <summary>A domain unload: what was posted is never run (a Send waiting on it is let go).</summary>
        public int Drop()
        {
            lock (queue)
            {
                var dropped = queue.Count;
                foreach (var work in queue)
                {
                    work.Abandon();
                }
                queue.Clear();
                return dropped;
            }
        }

        public sealed class WorkRequest
        {
            readonly SendOrPostCallback callback;
            readonly object state;
            readonly ManualResetEvent done;

            public WorkRequest(SendOrPostCallback callback, object state, ManualResetEvent done)
            {
                this.callback = callback;
                this.state = state;
                this.done = done;
            }

            public void Invoke()
            {
                try
                {
                    callback(state);
                }
                finally
                {
                    if (done != null)
                    {
                        done.Set();
                    }
                }
            }

            public void Abandon()
            {
                if (done != null)
                {
                    done.Set();
                }
            }
        }
    }

    /// <summary>What a simulated domain reload measured.</summary>
    public sealed class DomainReload
    {
        /// <summary>How long beforeAssemblyReload held the main thread.</summary>
        public long MainThreadBlockedMs;

        /// <summary>Work posted to the main thread and never run: lost with the domain.</summary>
        public int WorkLost;
    }

    /// <summary>
    /// The Editor's main thread and the events the package uses
    /// (EditorApplication.update, delayCall, quitting;
    /// AssemblyReloadEvents.beforeAssemblyReload), ticking every
    /// <see cref="TickMs"/>.
    /// </summary>
    public sealed class SimulatedEditor : IDisposable
    {
        readonly Thread thread;
        readonly object gate = new object();
        readonly List<Action> delayCalls = new List<Action>();
        readonly ManualResetEvent started = new ManualResetEvent(false);
        volatile bool stopping;
        UnityLikeSynchronizationContext context;

        public SimulatedEditor()
        {
            thread = new Thread(Run) { IsBackground = true, Name = "Unity main thread (simulated)" };
            thread.Start();
            started.WaitOne();
        }

        /// <summary>
        /// Milliseconds between ticks: a focused Editor ticks often; an
        /// unfocused one is throttled (Preferences › General › Interaction
        /// Mode; about 10 ticks a second when in the background).
        /// </summary>
        public int TickMs { get; set; } = 2;

        /// <summary>EditorApplication.update (this domain's handlers).</summary>
        public event Action Update;

        /// <summary>AssemblyReloadEvents.beforeAssemblyReload.</summary>
        public event Action BeforeAssemblyReload;

        /// <summary>EditorApplication.quitting.</summary>
        public event Action Quitting;

        public UnityLikeSynchronizationContext Context => context;

        public bool IsMainThread => Thread.CurrentThread == thread;

        /// <summary>Ticks so far.</summary>
        public long Ticks { get; private set; }

        /// <summary>EditorApplication.delayCall: runs once, on the main thread, at a coming tick.</summary>
        public void DelayCall(Action action)
        {
            lock (gate)
            {
                delayCalls.Add(action);
            }
        }

        /// <summary>Runs <paramref name="body"/> on the main thread at its next tick (as work posted to its context).</summary>
        public Task<T> Invoke<T>(Func<T> body)
        {
            var done = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
            context.Post(_ =>
            {
                try
                {
                    done.SetResult(body());
                }
                catch (Exception e)
                {
                    done.SetException(e);
                }
            }, null);
            return done.Task;
        }

        /// <summary>
        /// A domain reload: beforeAssemblyReload on the main thread, then the
        /// unload: posted work lost, this domain's handlers gone, and
        /// <paramref name="unload"/> (what unloading does to the domain's
        /// objects) run.
        /// </summary>
        public Task<DomainReload> ReloadDomain(Action unload)
        {
            return Invoke(() =>
            {
                var watch = Stopwatch.StartNew();
                var before = BeforeAssemblyReload;
                if (before != null)
                {
                    before();
                }
                var reload = new DomainReload { MainThreadBlockedMs = watch.ElapsedMilliseconds, WorkLost = context.Drop() };
                lock (gate)
                {
                    delayCalls.Clear();
                }
                Update = null;
                BeforeAssemblyReload = null;
                Quitting = null;
                if (unload != null)
                {
                    unload();
                }
                return reload;
            });
        }

        /// <summary>The quit: EditorApplication.quitting on the main thread; the milliseconds it held it.</summary>
        public Task<long> Quit()
        {
            return Invoke(() =>
            {
                var watch = Stopwatch.StartNew();
                var quitting = Quitting;
                if (quitting != null)
                {
                    quitting();
                }
                return watch.ElapsedMilliseconds;
            });
        }

        void Run()
        {
            context = new UnityLikeSynchronizationContext(Thread.CurrentThread.ManagedThreadId);
            SynchronizationContext.SetSynchronizationContext(context);
            started.Set();
            while (!stopping)
            {
                Tick();
                Thread.Sleep(TickMs);
            }
        }

        void Tick()
        {
            Ticks++;
            try
            {
                context.ExecuteTasks();
                var update = Update;
                if (update != null)
                {
                    update();
                }
                Action[] now;
                lock (gate)
                {
                    now = delayCalls.ToArray();
                    delayCalls.Clear();
                }
                foreach (var action in now)
                {
                    action();
                }
            }
            catch (Exception e)
            {
                // Unity logs an exception of a tick and goes on ticking.
                Console.Error.WriteLine("simulated Editor: an exception in a tick: " + e);
            }
        }

        public void Dispose()
        {
            stopping = true;
            thread.Join(1000);
        }
    }
}
