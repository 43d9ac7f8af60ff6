// The resume journal (§5, extension): recent request ids with their state,
// kept behind a persistence interface so it survives a domain reload (the
// Editor layer stores it in SessionState; tests and the headless host keep
// it in memory). A resent request (x-resume) gets the journaled answer,
// interrupted, or runs normally.
//
// The journal is written out when its store asks (SessionState once per
// Editor tick, and before a reload), never once per request: serialising
// 256 entries for each of a flood of requests made the headless host grow
// by 300 MB for 1,000 pings.

using System;
using System.Collections.Generic;
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

    /// <summary>What the journal knows of a request id.</summary>
    public enum JournalState
    {
        Unknown,
        Started,
        Completed,
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
                return JournalState.Started;
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
            }
            store.Save(Serialize);
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
