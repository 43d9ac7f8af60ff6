// Menu items (§6): get-menu-items and execute-menu-item.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    public enum MenuFilterType
    {
        contains,
        exact,
        startswith,
    }

    public class GetMenuItemsParams
    {
        [Param("Text to filter MenuItem paths (empty for all items)")]
        public string FilterText = "";

        [Param("Type of filter to apply")]
        public MenuFilterType FilterType = MenuFilterType.contains;

        [Param("Include validation functions in the results")]
        public bool IncludeValidation;

        [Param("Maximum number of menu items to retrieve", Min = 1, Max = int.MaxValue)]
        public int MaxCount = 200;
    }

    public class MenuItemDetails
    {
        public string Path;
        public string MethodName;
        public string TypeName;
        public string AssemblyName;
        public long Priority;
        public bool IsValidateFunction;
    }

    public class GetMenuItemsResult
    {
        public List<MenuItemDetails> MenuItems = new List<MenuItemDetails>();
        public int TotalCount;
        public int FilteredCount;
        public string AppliedFilter;
        public MenuFilterType AppliedFilterType;
    }

    [McpTool("get-menu-items", Description = "Retrieve Unity MenuItems with detailed metadata for programmatic execution", Order = 90, ReadOnly = true, Idempotent = true)]
    public sealed class GetMenuItemsTool : UnityTool<GetMenuItemsParams, GetMenuItemsResult>
    {
        protected override Task<GetMenuItemsResult> Answer(GetMenuItemsParams p, ToolContext context)
        {
            var items = context.Editor.MenuItems();
            var needle = p.FilterText.ToLowerInvariant();
            Func<MenuItemInfo, bool> matches = item =>
            {
                if (needle.Length == 0)
                {
                    return true;
                }
                var path = item.Path.ToLowerInvariant();
                switch (p.FilterType)
                {
                    case MenuFilterType.exact:
                        return path == needle;
                    case MenuFilterType.startswith:
                        return path.StartsWith(needle, StringComparison.Ordinal);
                    default:
                        return path.Contains(needle);
                }
            };
            var shown = new List<MenuItemDetails>();
            foreach (var item in items.Where(i => p.IncludeValidation || !i.IsValidateFunction).Where(matches).Take(p.MaxCount))
            {
                shown.Add(new MenuItemDetails
                {
                    Path = item.Path,
                    MethodName = item.MethodName,
                    TypeName = item.TypeName,
                    AssemblyName = item.AssemblyName,
                    Priority = item.Priority,
                    IsValidateFunction = item.IsValidateFunction,
                });
            }
            return Task.FromResult(new GetMenuItemsResult
            {
                MenuItems = shown,
                TotalCount = items.Count,
                FilteredCount = shown.Count,
                AppliedFilter = p.FilterText,
                AppliedFilterType = p.FilterType,
            });
        }
    }

    public class ExecuteMenuItemParams
    {
        [Param("The menu item path to execute (e.g., \"GameObject/Create Empty\")")]
        public string MenuItemPath = "";

        [Param("Whether to use reflection as fallback if EditorApplication.ExecuteMenuItem fails")]
        public bool UseReflectionFallback = true;
    }

    public class ExecuteMenuItemResult
    {
        public string MenuItemPath;
        public bool Success;

        /// <summary>EditorApplication or Reflection; empty when it did not run.</summary>
        public string ExecutionMethod;

        public string ErrorMessage;
        public string Details;
        public bool MenuItemFound;
    }

    [McpTool("execute-menu-item", Description = "Execute Unity MenuItem by path", Order = 100, Destructive = true, Gate = ToolGate.MenuItemExecution)]
    public sealed class ExecuteMenuItemTool : UnityTool<ExecuteMenuItemParams, ExecuteMenuItemResult>
    {
        protected override Task<ExecuteMenuItemResult> Answer(ExecuteMenuItemParams p, ToolContext context)
        {
            var path = p.MenuItemPath.Trim();
            if (path.Length == 0)
            {
                throw new RpcError(RpcErrorKind.InvalidParams, "Parameter 'MenuItemPath' must not be empty").With("parameter", "MenuItemPath");
            }
            var run = context.Editor.ExecuteMenuItem(path, p.UseReflectionFallback);
            return Task.FromResult(new ExecuteMenuItemResult
            {
                MenuItemPath = path,
                Success = run.Success,
                ExecutionMethod = run.Success ? run.Method : "",
                ErrorMessage = run.Error,
                Details = run.Details,
                MenuItemFound = run.Found,
            });
        }
    }
}
