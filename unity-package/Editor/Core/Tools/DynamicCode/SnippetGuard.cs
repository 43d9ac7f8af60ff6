// What bounds a snippet of execute-dynamic-code while it runs. The snippet's
// compiled IL is rewritten before it loads (SnippetRewriter) to call in here
// at every method entry, every backward branch (each loop iteration), every
// return and catch, and, at Restricted, before each array it allocates and
// after each string or array a call gives it. Here the call's budgets are
// spent: its deadline, its steps, how deep its calls nest, the bytes it
// allocates. Past one, the snippet is stopped with SnippetStoppedException
// and the main thread comes back; a catch of the snippet's own cannot hold
// it, as every way back into a loop steps again.
//
// Nothing of a snippet outlives its call: once the call ends, its code
// (a callback it registered, a continuation, a thread it started at
// FullAccess) is stopped at its first step.

using System;
using System.Diagnostics;

namespace UnityMcp.Core
{
    /// <summary>The budgets of one snippet call (docs/dynamic-code.md states the defaults).</summary>
    public sealed class SnippetLimits
    {
        /// <summary>Method entries plus loop iterations (a hundred million: about a second of a tight loop).</summary>
        public long Steps = 100000000;

        /// <summary>Snippet calls nested on one thread: well before any stack overflows.</summary>
        public int Depth = 256;

        /// <summary>Bytes of arrays and strings the snippet may allocate (Restricted; below 0: not counted).</summary>
        public long AllocationBytes = 256L * 1024 * 1024;

        /// <summary>How long the C# compiler may take with the snippet.</summary>
        public TimeSpan CompileTime = TimeSpan.FromSeconds(30);

        /// <summary>
        /// Restricted: a hundred million steps and 256 MB; FullAccess: ten billion steps
        /// and allocations not counted (the deadline and the nesting bound both).
        /// </summary>
        public static SnippetLimits For(DynamicCodeSecurityLevel level)
        {
            return level == DynamicCodeSecurityLevel.Restricted
                ? new SnippetLimits()
                : new SnippetLimits { Steps = 10000000000, AllocationBytes = -1 };
        }
    }

    /// <summary>Why a snippet was stopped.</summary>
    public enum SnippetStop
    {
        Deadline,
        Steps,
        Depth,
        Allocation,
        /// <summary>Its code ran after its call had ended.</summary>
        Ended,
    }

    /// <summary>A snippet stopped by its budgets (catching it does not let the snippet go on).</summary>
    public sealed class SnippetStoppedException : Exception
    {
        public SnippetStop Why { get; }

        public SnippetStoppedException(SnippetStop why, string message) : base(message)
        {
            Why = why;
        }
    }

    /// <summary>The budgets the rewritten snippet code spends; one snippet call at a time.</summary>
    public static class SnippetGuard
    {
        sealed class Call
        {
            public long StepsLeft;
            public long StepsAllowed;
            public long Deadline;
            public int MaxDepth;
            public long BytesLeft;
            public long BytesAllowed;
            public bool CountsBytes;
            public long Started;
            /// <summary>Why it was stopped, once it was: every later step throws the same.</summary>
            public SnippetStoppedException Stopped;
        }

        // Written by the thread that runs the call (Begin, End), read by any.
        static volatile Call active;

        [ThreadStatic]
        static int depth;

        /// <summary>Starts a call's budgets; disposing ends it (and any of its code that runs later stops).</summary>
        public static IDisposable Begin(SnippetLimits limits, TimeSpan remaining)
        {
            var ticks = (long)(Math.Max(0, remaining.TotalSeconds) * Stopwatch.Frequency);
            active = new Call
            {
                StepsLeft = limits.Steps,
                StepsAllowed = limits.Steps,
                Deadline = Stopwatch.GetTimestamp() + ticks,
                MaxDepth = limits.Depth,
                BytesLeft = limits.AllocationBytes,
                BytesAllowed = limits.AllocationBytes,
                CountsBytes = limits.AllocationBytes >= 0,
                Started = Stopwatch.GetTimestamp(),
            };
            depth = 0;
            return new Ending();
        }

        sealed class Ending : IDisposable
        {
            public void Dispose()
            {
                active = null;
                depth = 0;
            }
        }

        /// <summary>How the current call was stopped, if it was (the snippet may have caught it and gone on to return).</summary>
        public static SnippetStoppedException Verdict
        {
            get
            {
                var call = active;
                return call == null ? null : call.Stopped;
            }
        }

        /// <summary>Time left until the call's deadline (zero outside a call).</summary>
        public static TimeSpan TimeLeft
        {
            get
            {
                var call = active;
                if (call == null)
                {
                    return TimeSpan.Zero;
                }
                var ticks = call.Deadline - Stopwatch.GetTimestamp();
                return ticks <= 0 ? TimeSpan.Zero : TimeSpan.FromSeconds(ticks / (double)Stopwatch.Frequency);
            }
        }

        /// <summary>Steps the call has taken so far (0 outside one).</summary>
        public static long StepsTaken
        {
            get
            {
                var call = active;
                return call == null ? 0 : call.StepsAllowed - Math.Max(0, call.StepsLeft);
            }
        }

        static Call Current()
        {
            var call = active;
            if (call == null)
            {
                throw new SnippetStoppedException(SnippetStop.Ended, "the snippet's call has ended: its code does not run after it (a callback, a continuation or a thread it left behind)");
            }
            if (call.Stopped != null)
            {
                throw call.Stopped;
            }
            return call;
        }

        static Exception Stop(Call call, SnippetStop why, string message)
        {
            call.Stopped = new SnippetStoppedException(why, message);
            return call.Stopped;
        }

        /// <summary>A loop iteration or a call: spends one step, and checks the clock every 16.</summary>
        public static void Step()
        {
            var call = Current();
            var left = --call.StepsLeft;
            if (left < 0)
            {
                throw Stop(call, SnippetStop.Steps, "the snippet was stopped: it spent its budget of " + call.StepsAllowed.ToString("N0", System.Globalization.CultureInfo.InvariantCulture) + " steps (loop iterations and calls)");
            }
            if ((left & 15) == 0 && Stopwatch.GetTimestamp() > call.Deadline)
            {
                var ran = (Stopwatch.GetTimestamp() - call.Started) / (double)Stopwatch.Frequency;
                throw Stop(call, SnippetStop.Deadline, "the snippet was stopped at its deadline, after " + ran.ToString("0.0", System.Globalization.CultureInfo.InvariantCulture)
                    + " s and " + (call.StepsAllowed - left).ToString("N0", System.Globalization.CultureInfo.InvariantCulture) + " steps");
            }
        }

        /// <summary>A snippet method starts: a step, one frame deeper; the depth it runs at.</summary>
        public static int Enter()
        {
            Step();
            var d = ++depth;
            var call = active;
            if (call != null && d > call.MaxDepth)
            {
                depth--;
                // Not kept as the call's verdict: the snippet may unwind and go on.
                throw new SnippetStoppedException(SnippetStop.Depth, "the snippet was stopped before its stack could overflow: over " + call.MaxDepth + " of its calls were nested");
            }
            return d;
        }

        /// <summary>A snippet method returns from depth <paramref name="at"/>.</summary>
        public static void Leave(int at) => depth = at - 1;

        /// <summary>A catch, filter or finally of a method at depth <paramref name="at"/> runs.</summary>
        public static void Resume(int at) => depth = at;

        /// <summary>Before <c>new T[count]</c>: the bytes it takes, against the budget.</summary>
        public static void Allocate(long count, int elementSize)
        {
            var call = Current();
            if (!call.CountsBytes)
            {
                return;
            }
            Spend(call, count < 0 ? 0 : count * Math.Max(1, elementSize));
        }

        /// <summary>A string or array a call gave the snippet, against the budget; returned as it is.</summary>
        public static T Counted<T>(T value) where T : class
        {
            var call = active;
            if (call == null || !call.CountsBytes || value == null)
            {
                return value;
            }
            var text = value as string;
            if (text != null)
            {
                Spend(call, 2L * text.Length);
                return value;
            }
            var array = value as Array;
            if (array != null)
            {
                var element = array.GetType().GetElementType();
                var size = element != null && element.IsPrimitive ? Buffer.ByteLength(array) : array.LongLength * IntPtr.Size;
                Spend(call, size);
            }
            return value;
        }

        static void Spend(Call call, long bytes)
        {
            call.BytesLeft -= bytes;
            if (call.BytesLeft < 0)
            {
                throw Stop(call, SnippetStop.Allocation, "the snippet was stopped: it allocated over " + (call.BytesAllowed / (1024 * 1024)) + " MB of arrays and strings");
            }
        }
    }
}
