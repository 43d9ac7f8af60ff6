// The headless host's Unity Search: the query language fake-unity models.
// Words match names and paths (case-insensitive, all must match); * and ?
// are wildcards (against the path when the word has a /, else the name);
// t:Type filters by type (by component type for scene objects); a
// provider's filter id (p:, h: …) selects that provider.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Text.RegularExpressions;
using UnityMcp.Core;

namespace UnityMcp.Host
{
    public static class ModelSearch
    {
        /// <summary>A provider's item with the component types t: also matches.</summary>
        public sealed class Candidate
        {
            public readonly SearchItem Item;
            public readonly List<string> Components;

            public Candidate(SearchItem item, IEnumerable<string> components = null)
            {
                Item = item;
                Components = components != null ? components.ToList() : new List<string>();
            }
        }

        public sealed class Query
        {
            public List<string> Words = new List<string>();
            public List<KeyValuePair<Regex, bool>> Patterns = new List<KeyValuePair<Regex, bool>>();
            public List<string> Types = new List<string>();
        }

        public static Query Parse(string text, List<SearchProviderInfo> providers)
        {
            var query = new Query();
            foreach (var whole in text.Split((char[])null, StringSplitOptions.RemoveEmptyEntries))
            {
                var token = whole;
                if (token.StartsWith("t:", StringComparison.Ordinal))
                {
                    query.Types.Add(token.Substring(2).ToLowerInvariant());
                    continue;
                }
                if (token.StartsWith("ref:", StringComparison.Ordinal))
                {
                    throw new ArgumentException("the headless host does not model asset references, so `ref:` queries are not supported");
                }
                var byFilter = providers.FirstOrDefault(p => p.FilterId.Length > 0 && token.StartsWith(p.FilterId, StringComparison.Ordinal));
                if (byFilter != null)
                {
                    token = token.Substring(byFilter.FilterId.Length);
                }
                if (token.Length == 0)
                {
                    continue;
                }
                if (token.IndexOfAny(new[] { '*', '?' }) >= 0)
                {
                    query.Patterns.Add(new KeyValuePair<Regex, bool>(UnityMcp.Core.Patterns.Wildcard(token, true), token.Contains("/")));
                }
                else
                {
                    query.Words.Add(token.ToLowerInvariant());
                }
            }
            return query;
        }

        /// <summary>The matching items, best score first, then by path.</summary>
        public static List<SearchItem> Run(Query query, List<Candidate> items)
        {
            var matched = new List<SearchItem>();
            foreach (var candidate in items)
            {
                var item = candidate.Item;
                var label = item.Label.ToLowerInvariant();
                var path = item.Path.ToLowerInvariant();
                if (!query.Words.All(w => label.Contains(w) || path.Contains(w))
                    || !query.Patterns.All(p => p.Key.IsMatch(p.Value ? item.Path : item.Label))
                    || !query.Types.All(t => item.Type.ToLowerInvariant() == t || candidate.Components.Any(c => c.ToLowerInvariant() == t)))
                {
                    continue;
                }
                item.Score = query.Words.Sum(w => label == w ? 100 : label.StartsWith(w, StringComparison.Ordinal) ? 50 : 10);
                matched.Add(item);
            }
            return matched.OrderByDescending(i => i.Score).ThenBy(i => i.Path, StringComparer.Ordinal).ToList();
        }
    }
}
