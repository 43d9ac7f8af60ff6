// Unity Search (§6): unity-search and get-provider-details. The Editor runs
// the query; the tool adds the filters, the limit and saving to a file.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    public enum SearchFlags
    {
        Default = 0,
        Synchronous = 1,
        WantsMore = 2,
        Packages = 4,
        Sorted = 8,
    }

    public enum OutputFormat
    {
        JSON,
        CSV,
        TSV,
    }

    public class UnitySearchParams
    {
        [Param("Search query string (supports Unity Search syntax), e.g. \"*.cs\", \"t:Texture2D\", \"Assets/Scripts/*.cs\"")]
        public string SearchQuery = "";

        [Param("Specific search providers to use (empty = all active providers)")]
        public string[] Providers = new string[0];

        [Param("Maximum number of search results to return", Min = 1, Max = int.MaxValue)]
        public int MaxResults = 50;

        [Param("Whether to include detailed descriptions in results")]
        public bool IncludeDescription = true;

        [Param("Whether to include file metadata (size, modified date)")]
        public bool IncludeMetadata;

        [Param("Search flags for controlling Unity Search behavior")]
        public SearchFlags SearchFlags = SearchFlags.Default;

        [Param("Whether to save search results to an external file instead of returning them")]
        public bool SaveToFile;

        [Param("Output file format when SaveToFile is enabled")]
        public OutputFormat OutputFormat = OutputFormat.JSON;

        [Param("Save results to a file automatically above this many results (0 disables)", Min = 0, Max = int.MaxValue)]
        public int AutoSaveThreshold = 100;

        [Param("Filter results by file extension (e.g., \"cs\", \"prefab\", \"mat\")")]
        public string[] FileExtensions = new string[0];

        [Param("Filter results by asset type (e.g., \"Texture2D\", \"GameObject\", \"MonoScript\")")]
        public string[] AssetTypes = new string[0];

        [Param("Filter results by path pattern (supports wildcards)")]
        public string PathFilter = "";
    }

    /// <summary>One Unity Search result as unity-search answers it.</summary>
    public class SearchResultItem
    {
        public string Id;
        public string Label;

        /// <summary>Absent unless IncludeDescription.</summary>
        [OmitWhenNull]
        public string Description;

        public string Provider;
        public string Type;
        public string Path;
        public long Score;
        public string FileExtension;

        /// <summary>Only with IncludeMetadata; null when Unity does not say.</summary>
        [WrittenWhen(nameof(WithMetadata))]
        public long? FileSize;

        /// <summary>Only with IncludeMetadata; null when Unity does not say.</summary>
        [WrittenWhen(nameof(WithMetadata)), MayBeNull]
        public string LastModified;

        /// <summary>Whether FileSize and LastModified are written.</summary>
        internal bool WithMetadata;
    }

    public class AppliedSearchFilters
    {
        public List<string> FileExtensions = new List<string>();
        public List<string> AssetTypes = new List<string>();
        public string PathFilter;
        public int FilteredOutCount;
    }

    /// <summary>unity-search's answer; Success false (with ErrorMessage) when the search could not run.</summary>
    public class UnitySearchResult
    {
        public List<SearchResultItem> Results = new List<SearchResultItem>();
        public int TotalCount;
        public int DisplayedCount;
        public string SearchQuery;
        public List<string> ProvidersUsed = new List<string>();
        public long SearchDurationMs;
        public bool Success;
        public string ErrorMessage;

        /// <summary>Where the results went when saved to a file; empty otherwise.</summary>
        public string ResultsFilePath;

        public bool ResultsSavedToFile;

        /// <summary>JSON, CSV or TSV when saved to a file; empty otherwise.</summary>
        [ShortText]
        public string SavedFileFormat;

        /// <summary>user_request or auto_threshold when saved to a file; empty otherwise.</summary>
        [ShortText]
        public string SaveToFileReason;

        public AppliedSearchFilters AppliedFilters = new AppliedSearchFilters();
    }

    [McpTool("unity-search", Description = "Search Unity project using Unity Search API with comprehensive filtering and export options", Order = 60, ReadOnly = true, Idempotent = true)]
    public sealed class UnitySearchTool : UnityTool<UnitySearchParams, UnitySearchResult>
    {
        protected override Task<UnitySearchResult> Answer(UnitySearchParams p, ToolContext context)
        {
            var watch = Stopwatch.StartNew();
            var editor = context.Editor;
            var all = editor.SearchProviders();
            Func<int, AppliedSearchFilters> applied = removed => new AppliedSearchFilters
            {
                FileExtensions = p.FileExtensions.ToList(),
                AssetTypes = p.AssetTypes.ToList(),
                PathFilter = p.PathFilter,
                FilteredOutCount = removed,
            };
            Func<string, IEnumerable<string>, Task<UnitySearchResult>> fail = (message, named) => Task.FromResult(new UnitySearchResult
            {
                Results = new List<SearchResultItem>(),
                TotalCount = 0,
                DisplayedCount = 0,
                SearchQuery = p.SearchQuery,
                ProvidersUsed = named.ToList(),
                SearchDurationMs = watch.ElapsedMilliseconds,
                Success = false,
                ErrorMessage = message,
                ResultsFilePath = "",
                ResultsSavedToFile = false,
                SavedFileFormat = "",
                SaveToFileReason = "",
                AppliedFilters = applied(0),
            });
            var unknown = p.Providers.FirstOrDefault(r => all.All(x => x.Id != r));
            if (unknown != null)
            {
                return fail("Unknown search provider: " + unknown + ". Available providers: " + string.Join(", ", all.Select(x => x.Id).ToArray()), p.Providers);
            }
            // Providers named in the query (p:, h: …) narrow the choice.
            var tokens = p.SearchQuery.Split((char[])null, StringSplitOptions.RemoveEmptyEntries);
            var inQuery = new List<string>();
            foreach (var token in tokens)
            {
                var byFilter = all.FirstOrDefault(x => x.FilterId.Length > 0 && token.StartsWith(x.FilterId, StringComparison.Ordinal) && !token.StartsWith("t:", StringComparison.Ordinal));
                if (byFilter != null)
                {
                    inQuery.Add(byFilter.Id);
                }
            }
            var providers = all
                .Where(x => p.Providers.Length == 0 ? x.IsActive : p.Providers.Contains(x.Id))
                .Where(x => inQuery.Count == 0 || inQuery.Contains(x.Id))
                .OrderBy(x => x.Priority)
                .ToList();
            var used = providers.Select(x => x.Id).ToList();
            var extensions = p.FileExtensions.Select(e => e.TrimStart('.').ToLowerInvariant()).ToList();
            var types = p.AssetTypes.Select(t => t.ToLowerInvariant()).ToList();
            var hasQuery = tokens.Any(t => all.All(x => x.FilterId.Length == 0 || t != x.FilterId));
            if (!hasQuery && extensions.Count == 0 && types.Count == 0 && p.PathFilter.Length == 0)
            {
                return fail("The search query is empty: give SearchQuery or a filter", used);
            }
            List<SearchItem> matched;
            try
            {
                matched = editor.Search(p.SearchQuery, providers, p.SearchFlags == SearchFlags.Packages);
            }
            catch (ArgumentException e)
            {
                return fail(e.Message, p.Providers);
            }
            var pathPattern = p.PathFilter.Length == 0 ? null
                : Patterns.Wildcard(p.PathFilter.IndexOfAny(new[] { '*', '?' }) >= 0 ? p.PathFilter : "*" + p.PathFilter + "*", true);
            var before = matched.Count;
            matched = matched.Where(item => (extensions.Count == 0 || extensions.Contains(item.Extension))
                && (types.Count == 0 || types.Contains(item.Type.ToLowerInvariant()))
                && (pathPattern == null || pathPattern.IsMatch(item.Path))).ToList();
            var filteredOut = before - matched.Count;
            var reason = p.SaveToFile ? "user_request" : p.AutoSaveThreshold > 0 && matched.Count > p.AutoSaveThreshold ? "auto_threshold" : "";
            var results = new List<SearchResultItem>();
            var filePath = "";
            var format = "";
            if (reason.Length == 0)
            {
                foreach (var item in matched.Take(p.MaxResults))
                {
                    results.Add(Item(item, p.IncludeDescription, p.IncludeMetadata));
                }
            }
            else
            {
                format = p.OutputFormat.ToString();
                var rows = matched.Select(item => ToolResults.ToJson(Item(item, p.IncludeDescription, p.IncludeMetadata))).ToList();
                filePath = Save(editor.ProjectPath, p.OutputFormat, p.SearchQuery, rows);
            }
            return Task.FromResult(new UnitySearchResult
            {
                Results = results,
                TotalCount = matched.Count,
                DisplayedCount = results.Count,
                SearchQuery = p.SearchQuery,
                ProvidersUsed = used,
                SearchDurationMs = watch.ElapsedMilliseconds,
                Success = true,
                ErrorMessage = "",
                ResultsFilePath = filePath,
                ResultsSavedToFile = filePath.Length > 0,
                SavedFileFormat = format,
                SaveToFileReason = reason,
                AppliedFilters = applied(filteredOut),
            });
        }

        static SearchResultItem Item(SearchItem item, bool description, bool metadata)
        {
            return new SearchResultItem
            {
                Id = item.Id,
                Label = item.Label,
                Description = description ? item.Description ?? "" : null,
                Provider = item.Provider,
                Type = item.Type,
                Path = item.Path,
                Score = item.Score,
                FileExtension = item.Extension,
                FileSize = item.FileSize,
                LastModified = item.LastModified,
                WithMetadata = metadata,
            };
        }

        static string Save(string project, OutputFormat format, string query, List<JObject> rows)
        {
            var columns = new[] { "Id", "Label", "Description", "Provider", "Type", "Path", "Score" };
            string body;
            if (format == OutputFormat.JSON)
            {
                body = new JObject { ["SearchQuery"] = query, ["TotalCount"] = rows.Count, ["Results"] = new JArray(rows.Cast<object>().ToArray()) }.ToString(Formatting.Indented);
            }
            else
            {
                var separator = format == OutputFormat.CSV ? "," : "\t";
                Func<JToken, string> cell = value =>
                {
                    var text = value == null || value.Type == JTokenType.Null ? "" : value.Type == JTokenType.String ? (string)value : value.ToString(Formatting.None);
                    if (format == OutputFormat.CSV && text.IndexOfAny(new[] { ',', '"', '\n' }) >= 0)
                    {
                        return "\"" + text.Replace("\"", "\"\"") + "\"";
                    }
                    return text.Replace('\t', ' ').Replace('\n', ' ');
                };
                var text2 = new StringBuilder(string.Join(separator, columns)).Append('\n');
                foreach (var row in rows)
                {
                    text2.Append(string.Join(separator, columns.Select(c => cell(row[c])).ToArray())).Append('\n');
                }
                body = text2.ToString();
            }
            return OutputFiles.Write(project, "SearchResults", "search_results", format.ToString().ToLowerInvariant(), Encoding.UTF8.GetBytes(body));
        }
    }

    public class ProviderDetailsParams
    {
        [Param("Specific provider ID to get details for (empty = all providers)")]
        public string ProviderId = "";

        [Param("Whether to include only active providers")]
        public bool ActiveOnly;

        [Param("Sort providers by priority (lower number = higher priority)")]
        public bool SortByPriority = true;

        [Param("Include detailed descriptions for each provider")]
        public bool IncludeDescriptions = true;
    }

    public class ProviderDetails
    {
        public string Id;
        public string DisplayName;

        /// <summary>Absent unless IncludeDescriptions.</summary>
        [OmitWhenNull]
        public string Description;

        public bool IsActive;
        public long Priority;
        public string FilterId;
    }

    public class ProviderDetailsResult
    {
        public List<ProviderDetails> Providers = new List<ProviderDetails>();
        public int TotalCount;
        public int ActiveCount;
        public int InactiveCount;
        public bool Success;
        public string ErrorMessage;

        /// <summary>The ProviderId asked for, or all.</summary>
        public string AppliedFilter;

        public bool SortedByPriority;
    }

    [McpTool("get-provider-details", Description = "Get detailed information about Unity Search providers including display names, descriptions, active status, and capabilities", Order = 80, ReadOnly = true, Idempotent = true)]
    public sealed class GetProviderDetailsTool : UnityTool<ProviderDetailsParams, ProviderDetailsResult>
    {
        protected override Task<ProviderDetailsResult> Answer(ProviderDetailsParams p, ToolContext context)
        {
            var all = context.Editor.SearchProviders();
            var providers = all.Where(x => p.ProviderId.Length == 0 || x.Id == p.ProviderId).Where(x => !p.ActiveOnly || x.IsActive).ToList();
            var error = p.ProviderId.Length > 0 && all.All(x => x.Id != p.ProviderId) ? "Search provider not found: " + p.ProviderId : "";
            if (p.SortByPriority)
            {
                providers = providers.OrderBy(x => x.Priority).ToList();
            }
            var list = new List<ProviderDetails>();
            foreach (var x in providers)
            {
                list.Add(new ProviderDetails
                {
                    Id = x.Id,
                    DisplayName = x.DisplayName,
                    Description = p.IncludeDescriptions ? x.Description ?? "" : null,
                    IsActive = x.IsActive,
                    Priority = x.Priority,
                    FilterId = x.FilterId,
                });
            }
            var active = providers.Count(x => x.IsActive);
            return Task.FromResult(new ProviderDetailsResult
            {
                Providers = list,
                TotalCount = providers.Count,
                ActiveCount = active,
                InactiveCount = providers.Count - active,
                Success = error.Length == 0,
                ErrorMessage = error,
                AppliedFilter = p.ProviderId.Length == 0 ? "all" : p.ProviderId,
                SortedByPriority = p.SortByPriority,
            });
        }
    }
}
