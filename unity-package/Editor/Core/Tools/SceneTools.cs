// The open scene (§6): find-game-objects and get-hierarchy.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    public enum SearchMode
    {
        Exact,
        Path,
        Regex,
        Contains,
    }

    /// <summary>A GameObject with where it sits.</summary>
    public sealed class PlacedObject
    {
        public SceneObject Object;

        /// <summary>Parent/Child, as GameObject.Find takes it.</summary>
        public string Path;

        public int Depth;

        /// <summary>activeInHierarchy: itself and every ancestor active.</summary>
        public bool ActiveInHierarchy;

        /// <summary>Every object under <paramref name="roots"/>, depth first, in hierarchy order.</summary>
        public static List<PlacedObject> Walk(IEnumerable<SceneObject> roots)
        {
            var all = new List<PlacedObject>();
            foreach (var root in roots)
            {
                Visit(root, null, 0, true, all);
            }
            return all;
        }

        static void Visit(SceneObject go, string parent, int depth, bool active, List<PlacedObject> all)
        {
            var path = parent == null ? go.Name : parent + "/" + go.Name;
            active = active && go.Active;
            all.Add(new PlacedObject { Object = go, Path = path, Depth = depth, ActiveInHierarchy = active });
            foreach (var child in go.Children)
            {
                Visit(child, path, depth + 1, active, all);
            }
        }
    }

    public class FindGameObjectsParams
    {
        [Param("GameObject name pattern to search for")]
        public string NamePattern = "";

        [Param("Search mode")]
        public SearchMode SearchMode = SearchMode.Exact;

        [Param("Array of component type names that GameObjects must have")]
        public string[] RequiredComponents = new string[0];

        [Param("Tag filter")]
        public string Tag = "";

        [Param("Layer filter", Min = 0, Max = 31)]
        public int? Layer;

        [Param("Whether to include inactive GameObjects")]
        public bool IncludeInactive;

        [Param("Maximum number of results to return", Min = 1, Max = int.MaxValue)]
        public int MaxResults = 20;

        [Param("Whether to include inherited properties")]
        public bool IncludeInheritedProperties;
    }

    public class FoundComponent
    {
        public string TypeName;
        public string AssemblyQualifiedName;

        /// <summary>Its serialized properties, as Unity names and nests them: an object, no more is promised.</summary>
        public JObject Properties;
    }

    public class FoundObject
    {
        public string name;
        public string path;
        public bool isActive;
        public string tag;
        public int layer;
        public List<FoundComponent> components = new List<FoundComponent>();
    }

    public class FindGameObjectsResult
    {
        public List<FoundObject> results = new List<FoundObject>();
        public int totalFound;

        /// <summary>Empty unless the search could not run.</summary>
        public string errorMessage;
    }

    [McpTool("find-game-objects", Description = "Find multiple GameObjects with advanced search criteria (component type, tag, layer, etc.)", Order = 50, ReadOnly = true, Idempotent = true)]
    public sealed class FindGameObjectsTool : UnityTool<FindGameObjectsParams, FindGameObjectsResult>
    {
        protected override Task<FindGameObjectsResult> Answer(FindGameObjectsParams p, ToolContext context)
        {
            Func<List<FoundObject>, int, string, Task<FindGameObjectsResult>> finish = (list, total, error) => Task.FromResult(new FindGameObjectsResult
            {
                results = list,
                totalFound = total,
                errorMessage = error,
            });
            var pattern = p.NamePattern;
            if (pattern.Length == 0 && p.RequiredComponents.Length == 0 && p.Tag.Length == 0 && p.Layer == null)
            {
                return finish(new List<FoundObject>(), 0, "At least one search criterion is required (NamePattern, RequiredComponents, Tag or Layer)");
            }
            var regex = p.SearchMode == SearchMode.Regex && pattern.Length > 0 ? Patterns.Regex("NamePattern", pattern) : null;
            Func<PlacedObject, bool> nameMatches = placed =>
            {
                if (pattern.Length == 0)
                {
                    return true;
                }
                switch (p.SearchMode)
                {
                    case SearchMode.Path:
                        return placed.Path == pattern;
                    case SearchMode.Regex:
                        return regex.IsMatch(placed.Object.Name);
                    case SearchMode.Contains:
                        return placed.Object.Name.IndexOf(pattern, StringComparison.OrdinalIgnoreCase) >= 0;
                    default:
                        return placed.Object.Name == pattern;
                }
            };
            var found = PlacedObject.Walk(context.Editor.SceneRoots())
                .Where(o => p.IncludeInactive || o.ActiveInHierarchy)
                .Where(nameMatches)
                .Where(o => p.Tag.Length == 0 || o.Object.Tag == p.Tag)
                .Where(o => p.Layer == null || o.Object.Layer == p.Layer.Value)
                .Where(o => p.RequiredComponents.All(want => o.Object.Components.Any(c => c.TypeName == want || (c.Namespace.Length > 0 && c.Namespace + "." + c.TypeName == want))))
                .ToList();
            var results = new List<FoundObject>();
            foreach (var placed in found.Take(p.MaxResults))
            {
                var go = placed.Object;
                var components = new List<FoundComponent>();
                foreach (var c in go.Components)
                {
                    var properties = (JObject)c.Properties.DeepClone();
                    if (p.IncludeInheritedProperties)
                    {
                        properties["name"] = go.Name;
                        properties["tag"] = go.Tag;
                        properties["hideFlags"] = 0;
                        if (c.HasEnabled)
                        {
                            properties["enabled"] = true;
                        }
                        foreach (var inherited in c.InheritedProperties.Properties())
                        {
                            properties[inherited.Name] = inherited.Value.DeepClone();
                        }
                    }
                    components.Add(new FoundComponent { TypeName = c.TypeName, AssemblyQualifiedName = c.AssemblyQualifiedName, Properties = properties });
                }
                results.Add(new FoundObject
                {
                    name = go.Name,
                    path = placed.Path,
                    isActive = go.Active,
                    tag = go.Tag,
                    layer = go.Layer,
                    components = components,
                });
            }
            return finish(results, found.Count, "");
        }
    }

    public class GetHierarchyParams
    {
        [Param("Whether to include inactive GameObjects in the hierarchy result")]
        public bool IncludeInactive = true;

        [Param("Maximum depth to traverse the hierarchy (-1 for unlimited depth)", Min = -1, Max = int.MaxValue)]
        public int MaxDepth = -1;

        [Param("Root GameObject path to start hierarchy traversal from (empty/null for all root objects)")]
        public string RootPath;

        [Param("Whether to include component information for each GameObject in the hierarchy")]
        public bool IncludeComponents = true;

        [Param("Maximum response size in KB before saving to file", Min = 0, Max = 1e9)]
        public double MaxResponseSizeKB = 100;
    }

    /// <summary>The scene get-hierarchy describes.</summary>
    public class HierarchyContext
    {
        /// <summary>runtime (play mode) or editor.</summary>
        public string sceneType;
        public string sceneName;
        public int nodeCount;
        public int maxDepth;
    }

    /// <summary>A GameObject in get-hierarchy, with its children.</summary>
    public class HierarchyNode
    {
        /// <summary>uLoopMCP's: the instance ID (from 6000.5 the EntityId's low 32 bits; §6 an object's identity).</summary>
        public long id;

        /// <summary>Extension: the identity, exact, in decimal.</summary>
        public string entityId;

        public string name;
        public int depth;
        public bool isActive;

        /// <summary>Component type names; empty unless IncludeComponents.</summary>
        public List<string> components = new List<string>();

        public List<HierarchyNode> children = new List<HierarchyNode>();
    }

    /// <summary>
    /// get-hierarchy's three answers: the hierarchy and its context; over
    /// MaxResponseSizeKB, hierarchySavedToFile … and Message instead of the
    /// hierarchy; no object at RootPath, an empty hierarchy with Message and
    /// ErrorMessage.
    /// </summary>
    public class HierarchyResult
    {
        [OmitWhenNull]
        public bool? hierarchySavedToFile;

        [OmitWhenNull]
        public string hierarchyFilePath;

        [OmitWhenNull]
        public string saveToFileReason;

        [OmitWhenNull]
        public List<HierarchyNode> hierarchy;

        public HierarchyContext context = new HierarchyContext();

        [OmitWhenNull]
        public string Message;

        [OmitWhenNull]
        public string ErrorMessage;
    }

    [McpTool("get-hierarchy", Description = "Get Unity Hierarchy structure in nested JSON format for AI-friendly processing", Order = 70, ReadOnly = true, Idempotent = true)]
    public sealed class GetHierarchyTool : UnityTool<GetHierarchyParams, HierarchyResult>
    {
        protected override Task<HierarchyResult> Answer(GetHierarchyParams p, ToolContext context)
        {
            var editor = context.Editor;
            var sceneRoots = editor.SceneRoots();
            Func<int, int, HierarchyContext> describe = (nodes, depth) => new HierarchyContext
            {
                sceneType = editor.IsPlaying ? "runtime" : "editor",
                sceneName = editor.SceneName,
                nodeCount = nodes,
                maxDepth = depth,
            };
            var roots = sceneRoots;
            var rootPath = string.IsNullOrEmpty(p.RootPath) ? null : p.RootPath.Trim('/');
            if (rootPath != null)
            {
                var root = PlacedObject.Walk(sceneRoots).FirstOrDefault(o => o.Path == rootPath);
                if (root == null)
                {
                    return Task.FromResult(new HierarchyResult
                    {
                        hierarchy = new List<HierarchyNode>(),
                        context = describe(0, 0),
                        Message = "",
                        ErrorMessage = "GameObject not found at path: " + rootPath,
                    });
                }
                roots = new List<SceneObject> { root.Object };
            }
            var count = 0;
            var deepest = 0;
            var hierarchy = new List<HierarchyNode>();
            foreach (var go in roots)
            {
                var node = Node(go, 0, p, ref count, ref deepest);
                if (node != null)
                {
                    hierarchy.Add(node);
                }
            }
            var description = describe(count, deepest);
            var hierarchyJson = ToolResults.ToJson(new HierarchyResult { hierarchy = hierarchy, context = description });
            var size = Encoding.UTF8.GetByteCount(hierarchyJson["hierarchy"].ToString(Formatting.None));
            var limit = (long)(p.MaxResponseSizeKB * 1024);
            if (size > limit)
            {
                var path = OutputFiles.Write(editor.ProjectPath, "HierarchyResults", "hierarchy", "json", Encoding.UTF8.GetBytes(hierarchyJson.ToString(Formatting.Indented)));
                return Task.FromResult(new HierarchyResult
                {
                    hierarchySavedToFile = true,
                    hierarchyFilePath = path,
                    saveToFileReason = "auto_threshold",
                    context = description,
                    Message = "Hierarchy is " + ((size + 1023) / 1024) + " KB, over the " + (limit / 1024) + " KB limit: saved to " + path,
                });
            }
            return Task.FromResult(new HierarchyResult { hierarchy = hierarchy, context = description });
        }

        static HierarchyNode Node(SceneObject go, int depth, GetHierarchyParams p, ref int count, ref int deepest)
        {
            if (!p.IncludeInactive && !go.Active)
            {
                return null;
            }
            count++;
            deepest = Math.Max(deepest, depth);
            var children = new List<HierarchyNode>();
            if (p.MaxDepth < 0 || depth < p.MaxDepth)
            {
                foreach (var child in go.Children)
                {
                    var node = Node(child, depth + 1, p, ref count, ref deepest);
                    if (node != null)
                    {
                        children.Add(node);
                    }
                }
            }
            var components = new List<string>();
            if (p.IncludeComponents)
            {
                foreach (var c in go.Components)
                {
                    components.Add(c.TypeName);
                }
            }
            return new HierarchyNode
            {
                id = go.InstanceId,
                entityId = go.EntityId,
                name = go.Name,
                depth = depth,
                isActive = go.Active,
                components = components,
                children = children,
            };
        }
    }

    /// <summary>Large results written under .uloop/outputs/&lt;Kind&gt;/ in the project (§6).</summary>
    public static class OutputFiles
    {
        /// <summary>Writes a new file (never over another); its project-relative path.</summary>
        public static string Write(string project, string kind, string stem, string extension, byte[] contents)
        {
            var stamp = DiscoveryFile.IsoTimestamp(DateTime.UtcNow).Replace(':', '-').Replace('.', '-').Replace('T', '_').TrimEnd('Z');
            var folder = System.IO.Path.Combine(System.IO.Path.Combine(System.IO.Path.Combine(project, ".uloop"), "outputs"), kind);
            try
            {
                System.IO.Directory.CreateDirectory(folder);
                for (var n = 0; ; n++)
                {
                    var name = stem + "_" + stamp + (n == 0 ? "" : "_" + n) + "." + extension;
                    var full = System.IO.Path.Combine(folder, name);
                    try
                    {
                        using (var file = new System.IO.FileStream(full, System.IO.FileMode.CreateNew, System.IO.FileAccess.Write))
                        {
                            file.Write(contents, 0, contents.Length);
                        }
                        return ".uloop/outputs/" + kind + "/" + name;
                    }
                    catch (System.IO.IOException) when (System.IO.File.Exists(full))
                    {
                        // Taken (two results within a millisecond): the next suffix.
                    }
                }
            }
            catch (Exception e) when (!(e is RpcError))
            {
                throw new RpcError(RpcErrorKind.InternalError, "Could not write .uloop/outputs/" + kind + ": " + e.Message);
            }
        }
    }
}
