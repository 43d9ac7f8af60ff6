// The console (§6): get-logs and clear-console.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Text.RegularExpressions;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    public enum LogTypeFilter
    {
        Error,
        Warning,
        Log,
        All,
    }

    public class GetLogsParams
    {
        [Param("Log type to filter")]
        public LogTypeFilter LogType = LogTypeFilter.All;

        [Param("Maximum number of logs to retrieve", Min = 0, Max = int.MaxValue)]
        public int MaxCount = 100;

        [Param("Text to search within log messages (retrieve all if empty)")]
        public string SearchText = "";

        [Param("Whether to use regular expression for search")]
        public bool UseRegex;

        [Param("Whether to search within stack trace as well")]
        public bool SearchInStackTrace;

        [Param("Whether to display stack traces")]
        public bool IncludeStackTrace = true;
    }

    public class LogLine
    {
        public string Type;
        public string Message;

        /// <summary>Absent unless IncludeStackTrace.</summary>
        [OmitWhenNull]
        public string StackTrace;
    }

    public class GetLogsResult
    {
        public int TotalCount;
        public int DisplayedCount;
        public LogTypeFilter LogType;
        public int MaxCount;
        public string SearchText;
        public bool IncludeStackTrace;
        public List<LogLine> Logs = new List<LogLine>();
    }

    [McpTool("get-logs", Description = "Retrieves log information from the Unity console with filtering and search", Order = 20, ReadOnly = true, Idempotent = true)]
    public sealed class GetLogsTool : UnityTool<GetLogsParams, GetLogsResult>
    {
        protected override Task<GetLogsResult> Answer(GetLogsParams p, ToolContext context)
        {
            Func<string, bool> matches = _ => true;
            if (p.SearchText.Length > 0 && p.UseRegex)
            {
                var regex = Patterns.Regex("SearchText", p.SearchText);
                matches = s => regex.IsMatch(s);
            }
            else if (p.SearchText.Length > 0)
            {
                matches = s => s.IndexOf(p.SearchText, StringComparison.OrdinalIgnoreCase) >= 0;
            }
            var type = p.LogType.ToString();
            var matching = context.Editor.ReadConsole()
                .Where(e => p.LogType == LogTypeFilter.All || e.Type == type)
                .Where(e => matches(e.Message) || (p.SearchInStackTrace && matches(e.StackTrace)))
                .ToList();
            // The most recent entries, oldest first, as the console shows them.
            var shown = matching.Skip(Math.Max(0, matching.Count - p.MaxCount));
            var logs = new List<LogLine>();
            foreach (var entry in shown)
            {
                logs.Add(new LogLine { Type = entry.Type, Message = entry.Message, StackTrace = p.IncludeStackTrace ? entry.StackTrace ?? "" : null });
            }
            return Task.FromResult(new GetLogsResult
            {
                TotalCount = matching.Count,
                DisplayedCount = logs.Count,
                LogType = p.LogType,
                MaxCount = p.MaxCount,
                SearchText = p.SearchText,
                IncludeStackTrace = p.IncludeStackTrace,
                Logs = logs,
            });
        }
    }

    public class ClearConsoleParams
    {
        [Param("Whether to add a confirmation log message after clearing")]
        public bool AddConfirmationMessage = true;
    }

    public class ClearedCounts
    {
        public int ErrorCount;
        public int WarningCount;
        public int LogCount;
    }

    public class ClearConsoleResult
    {
        public bool Success;
        public int ClearedLogCount;
        public ClearedCounts ClearedCounts = new ClearedCounts();
        public string Message;
        public string ErrorMessage;
    }

    [McpTool("clear-console", Description = "Clears Unity console logs for clean development workflow", Order = 40, Destructive = true)]
    public sealed class ClearConsoleTool : UnityTool<ClearConsoleParams, ClearConsoleResult>
    {
        protected override Task<ClearConsoleResult> Answer(ClearConsoleParams p, ToolContext context)
        {
            var editor = context.Editor;
            var cleared = editor.ClearConsole();
            if (p.AddConfirmationMessage)
            {
                editor.Log(new LogEntry { Type = "Log", Message = "=== Console cleared via MCP ===", StackTrace = "UnityEngine.Debug:Log (object)" });
            }
            Func<string, int> count = t => cleared.Count(e => e.Type == t);
            return Task.FromResult(new ClearConsoleResult
            {
                Success = true,
                ClearedLogCount = cleared.Count,
                ClearedCounts = new ClearedCounts { ErrorCount = count("Error"), WarningCount = count("Warning"), LogCount = count("Log") },
                Message = "Console cleared successfully (" + cleared.Count + " logs removed)",
                ErrorMessage = "",
            });
        }
    }

    /// <summary>Patterns the tools take: regular expressions and wildcards.</summary>
    public static class Patterns
    {
        /// <summary>A regular expression from a parameter; invalid_params naming it when it does not parse.</summary>
        public static Regex Regex(string parameter, string pattern)
        {
            try
            {
                return new Regex(pattern, RegexOptions.CultureInvariant);
            }
            catch (ArgumentException e)
            {
                throw new RpcError(RpcErrorKind.InvalidParams, "Parameter '" + parameter + "' is not a valid regular expression: " + e.Message)
                    .With("parameter", parameter);
            }
        }

        /// <summary>A wildcard pattern (*, ?) as an anchored regular expression.</summary>
        public static Regex Wildcard(string pattern, bool ignoreCase)
        {
            var escaped = System.Text.RegularExpressions.Regex.Escape(pattern).Replace("\\*", ".*").Replace("\\?", ".");
            return new Regex("^" + escaped + "$", ignoreCase ? RegexOptions.IgnoreCase | RegexOptions.CultureInvariant : RegexOptions.CultureInvariant);
        }
    }
}
