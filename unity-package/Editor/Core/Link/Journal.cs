// The resume journal (§5, extension): recent request ids with their state,
// kept behind a persistence interface so it survives a domain reload (the
// Editor layer stores it in SessionState; tests and the headless host keep
// it in memory). A resent request (x-resume) gets the journaled answer,
// interrupted, or runs normally.
//
// A call may go on after its domain reloads (a PlayMode test run, whose
// entering play mode reloads the domain: PlayModeRuns.cs): its entry is
// carried, with what the next domain needs to answer it and the call's
// deadline; a resent request waits for its answer there.
//
// The journal is written out when its store asks (SessionState once per
// Editor tick, and before a reload), never once per request: serialising
// 256 entries for each of a flood of requests made the headless host grow
// by 300 MB for 1,000 pings.

using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    /// <summary>Where the journal lives between domain reloads.</summary>
    public interface IJournalStore
    {
        /// <summary>The stored journal, or null.</summary>
        string Load();

        /// <summary>
        /// The journal changed: <paramref name="serialize"/> gives it as it is
        /// then, when the store writes it (it may never, or once for many changes).
        /// </summary>
        void Save(Func<string> serialize);
    }

    /// <summary>A store in memory (tests, the headless host): the journal is read out when loaded.</summary>
    public sealed class MemoryJournalStore : IJournalStore
    {
        Func<string> latest;

        public string Load() => latest != null ? latest() : null;

        public void Save(Func<string> serialize) => latest = serialize;
    }

    /// <summary>
    /// A store whose saves are held and written by <see cref="Flush"/> on the
    /// main thread (every Editor update, and before a reload): requests are
    /// answered off the main thread, and what keeps the journal across domains
    /// (Unity's SessionState) is main-thread only. Reads what was stored when
    /// the domain loaded until the first save.
    /// </summary>
    public sealed class HeldJournalStore : IJournalStore
    {
        readonly object gate = new object();
        readonly string loaded;
        readonly Action<string> write;
        Func<string> pending;
        bool dirty;

        /// <summary>On the main thread: <paramref name="stored"/> is the journal kept from before; <paramref name="write"/> keeps it.</summary>
        public HeldJournalStore(string stored, Action<string> write)
        {
            loaded = stored;
            this.write = write;
        }

        public string Load()
        {
            Func<string> latest;
            lock (gate)
            {
                latest = pending;
            }
            return latest != null ? latest() : loaded;
        }

        public void Save(Func<string> serialize)
        {
            lock (gate)
            {
                pending = serialize;
                dirty = true;
            }
        }

        /// <summary>Writes the journal if it changed since the last flush (main thread only): once, not every tick.</summary>
        public void Flush()
        {
            Func<string> serialize;
            lock (gate)
            {
                if (!dirty)
                {
                    return;
                }
                dirty = false;
                serialize = pending;
            }
            write(serialize());
        }
    }

    /// <summary>What the journal knows of a request id.</summary>
    public enum JournalState
    {
        Unknown,
        Started,
        /// <summary>Started, and going on after the domain that started it reloaded.</summary>
        Carried,
        Completed,
    }

    /// <summary>A call that goes on after the domain that started it reloads.</summary>
    public sealed class CarriedCall
    {
        public JToken Id;
        public string Method;

        /// <summary>The server session (one per domain) that started it.</summary>
        public string Domain;

        /// <summary>When its TimeoutSeconds runs out (UTC).</summary>
        public DateTime Deadline;

        public double TimeoutSeconds;

        /// <summary>What the tool needs to answer it in the next domain.</summary>
        public JObject State;

        internal JObject ToJson() => new JObject
        {
            ["id"] = Id,
            ["domain"] = Domain,
            ["deadline"] = Deadline.ToUniversalTime().ToString("o", System.Globalization.CultureInfo.InvariantCulture),
            ["timeoutSeconds"] = TimeoutSeconds,
            ["state"] = State,
        };

        internal static CarriedCall Of(JObject json, string method) => new CarriedCall
        {
            Id = json["id"],
            Method = method,
            Domain = (string)json["domain"],
            Deadline = DateTime.Parse((string)json["deadline"], System.Globalization.CultureInfo.InvariantCulture, System.Globalization.DateTimeStyles.RoundtripKind).ToUniversalTime(),
            TimeoutSeconds = (double?)json["timeoutSeconds"] ?? 0,
            State = json["state"] as JObject ?? new JObject(),
        };
    }

    /// <summary>The request journal.</summary>
    public sealed class RequestJournal
    {
        /// <summary>How many requests are remembered.</summary>
        public const int Capacity = 256;

        readonly IJournalStore store;
        readonly object gate = new object();
        // Key: the id as compact JSON (so 1 and "1" differ) plus the method.
        readonly List<string> order = new List<string>();
        readonly Dictionary<string, JObject> entries = new Dictionary<string, JObject>();

        // Requests of this domain waiting for a carried call's answer.
        readonly Dictionary<string, TaskCompletionSource<JObject>> waiting = new Dictionary<string, TaskCompletionSource<JObject>>();

        public RequestJournal(IJournalStore store)
        {
            this.store = store;
            var saved = store.Load();
            if (string.IsNullOrEmpty(saved))
            {
                return;
            }
            try
            {
                foreach (JObject entry in JArray.Parse(saved))
                {
                    var key = (string)entry["key"];
                    order.Add(key);
                    entries[key] = entry;
                }
            }
            catch (Newtonsoft.Json.JsonException)
            {
                // A journal that cannot be read is started afresh.
                order.Clear();
                entries.Clear();
            }
        }

        static string Key(JToken id, string method) => id.ToString(Newtonsoft.Json.Formatting.None) + " " + method;

        public JournalState StateOf(JToken id, string method, out JObject response)
        {
            lock (gate)
            {
                JObject entry;
                response = null;
                if (!entries.TryGetValue(Key(id, method), out entry))
                {
                    return JournalState.Unknown;
                }
                if (entry["response"] is JObject done)
                {
                    response = (JObject)done.DeepClone();
                    return JournalState.Completed;
                }
                return entry["carried"] is JObject ? JournalState.Carried : JournalState.Started;
            }
        }

        /// <summary>Marks a started request as going on after its domain reloads.</summary>
        public void Carry(JToken id, string method, CarriedCall call)
        {
            var key = Key(id, method);
            lock (gate)
            {
                JObject entry;
                if (!entries.TryGetValue(key, out entry) || entry["response"] is JObject)
                {
                    return;
                }
                call.Id = id;
                call.Method = method;
                entry["carried"] = call.ToJson();
            }
            store.Save(Serialize);
        }

        /// <summary>The carried call of a request, or null.</summary>
        public CarriedCall CarriedOf(JToken id, string method)
        {
            lock (gate)
            {
                JObject entry;
                if (!entries.TryGetValue(Key(id, method), out entry) || !(entry["carried"] is JObject carried))
                {
                    return null;
                }
                return CarriedCall.Of(carried, method);
            }
        }

        /// <summary>The carried calls not answered yet that another domain than <paramref name="domain"/> started.</summary>
        public List<CarriedCall> CarriedFromOtherDomains(string domain)
        {
            var calls = new List<CarriedCall>();
            lock (gate)
            {
                foreach (var key in order)
                {
                    var entry = entries[key];
                    if (entry["response"] is JObject || !(entry["carried"] is JObject carried))
                    {
                        continue;
                    }
                    var call = CarriedCall.Of(carried, MethodOf(key));
                    if (call.Domain != domain)
                    {
                        calls.Add(call);
                    }
                }
            }
            return calls;
        }

        static string MethodOf(string key) => key.Substring(key.LastIndexOf(' ') + 1);

        /// <summary>The request's whole response once it is completed in this domain.</summary>
        public Task<JObject> WhenCompleted(JToken id, string method)
        {
            var key = Key(id, method);
            lock (gate)
            {
                JObject entry;
                if (entries.TryGetValue(key, out entry) && entry["response"] is JObject done)
                {
                    return Task.FromResult((JObject)done.DeepClone());
                }
                TaskCompletionSource<JObject> completion;
                if (!waiting.TryGetValue(key, out completion))
                {
                    completion = new TaskCompletionSource<JObject>(TaskCreationOptions.RunContinuationsAsynchronously);
                    waiting[key] = completion;
                }
                return completion.Task;
            }
        }

        public void Started(JToken id, string method)
        {
            Put(Key(id, method), null);
        }

        /// <summary>Records the answer (the whole response message).</summary>
        public void Completed(JToken id, string method, JObject response)
        {
            Put(Key(id, method), response);
        }

        public int Count
        {
            get
            {
                lock (gate)
                {
                    return entries.Count;
                }
            }
        }

        void Put(string key, JObject response)
        {
            TaskCompletionSource<JObject> completion = null;
            lock (gate)
            {
                if (!entries.ContainsKey(key))
                {
                    order.Add(key);
                }
                entries[key] = new JObject { ["key"] = key, ["response"] = response };
                while (order.Count > Capacity)
                {
                    entries.Remove(order[0]);
                    order.RemoveAt(0);
                }
                if (response != null && waiting.TryGetValue(key, out completion))
                {
                    waiting.Remove(key);
                }
            }
            store.Save(Serialize);
            if (completion != null)
            {
                completion.TrySetResult((JObject)response.DeepClone());
            }
        }

        /// <summary>The journal as JSON, as it is now.</summary>
        string Serialize()
        {
            lock (gate)
            {
                var all = new JArray();
                foreach (var k in order)
                {
                    all.Add(entries[k]);
                }
                return all.ToString(Newtonsoft.Json.Formatting.None);
            }
        }
    }
}
