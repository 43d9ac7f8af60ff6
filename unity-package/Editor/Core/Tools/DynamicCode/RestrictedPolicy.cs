// What a snippet may use at Restricted, by purpose (docs/dynamic-code.md
// has it as a table): read and change the open scenes, their GameObjects
// and components, and the data of assets; plain .NET for computing with
// values (numbers, text, collections, LINQ, regular expressions with a
// time limit). Never the file system, the network, processes, native code,
// threads or anything else that runs after the call, reflection, project or
// Editor settings, packages, menu items, scripts, or the project's own code.
//
// An allow-list: a type or member is refused unless a rule below names it.
// Unity's types are listed one by one, with all their public members or
// only some; components (every subclass of UnityEngine.Component that
// Unity declares) are allowed with their members but for those that run
// other code later or by name. The project's own types may be named, cast
// to and have their fields read and written, but their methods are not
// called: Restricted cannot vouch for what they do.

using System;
using System.Collections.Generic;
using System.Linq;
using Mono.Cecil;

namespace UnityMcp.Core
{
    /// <summary>Restricted's allow-list, applied to one snippet's module.</summary>
    public sealed class RestrictedPolicy
    {
        readonly Dictionary<string, bool> components = new Dictionary<string, bool>();

        // ---- .NET ----

        /// <summary>Namespaces whose every type may be used (but for the members and types refused below).</summary>
        static readonly HashSet<string> DotNetNamespaces = new HashSet<string>
        {
            "System.Collections", "System.Collections.Generic", "System.Collections.ObjectModel", "System.Collections.Specialized",
            "System.Linq", "System.Text", "System.Text.RegularExpressions", "System.Globalization",
        };

        /// <summary>The types of namespace System that may be used.</summary>
        static readonly HashSet<string> SystemTypes = new HashSet<string>
        {
            "Object", "String", "ValueType", "Enum", "Void", "Boolean", "Char", "SByte", "Byte", "Int16", "UInt16", "Int32", "UInt32",
            "Int64", "UInt64", "Single", "Double", "Decimal", "DateTime", "DateTimeOffset", "DateTimeKind", "TimeSpan", "Guid", "Math",
            "MathF", "MidpointRounding", "Random", "Convert", "BitConverter", "Array", "Nullable", "Nullable`1", "Tuple", "ValueTuple",
            "Predicate`1", "Comparison`1", "Converter`2", "Delegate", "MulticastDelegate", "IDisposable", "IComparable", "IComparable`1",
            "IEquatable`1", "IFormattable", "IFormatProvider", "ICloneable", "EventArgs", "EventHandler", "EventHandler`1",
            "StringComparison", "StringComparer", "StringSplitOptions", "Attribute", "AttributeUsageAttribute", "AttributeTargets",
            "ObsoleteAttribute", "FlagsAttribute", "SerializableAttribute", "NonSerializedAttribute", "ParamArrayAttribute",
            "DayOfWeek", "Lazy`1", "Type", "RuntimeTypeHandle", "RuntimeFieldHandle", "Console", "Buffer",
            "Exception", "SystemException", "ArgumentException", "ArgumentNullException", "ArgumentOutOfRangeException",
            "InvalidOperationException", "NotSupportedException", "NotImplementedException", "FormatException", "OverflowException",
            "IndexOutOfRangeException", "NullReferenceException", "InvalidCastException", "DivideByZeroException",
            "ArithmeticException", "KeyNotFoundException", "ObjectDisposedException", "AggregateException", "TimeoutException",
            "Span`1", "ReadOnlySpan`1",
        };

        /// <summary>Types refused even in an allowed namespace, with why.</summary>
        static readonly Dictionary<string, string> DotNetTypesRefused = new Dictionary<string, string>
        {
            ["System.Linq.ParallelEnumerable"] = "threads (PLINQ)",
            ["System.Linq.ParallelQuery"] = "threads (PLINQ)",
            ["System.Linq.ParallelQuery`1"] = "threads (PLINQ)",
            ["System.Linq.OrderedParallelQuery`1"] = "threads (PLINQ)",
            ["System.Linq.Queryable"] = "code compiled at run time (expression trees)",
            ["System.Linq.EnumerableQuery"] = "code compiled at run time (expression trees)",
            ["System.Linq.EnumerableQuery`1"] = "code compiled at run time (expression trees)",
            ["System.Linq.IQueryable"] = "code compiled at run time (expression trees)",
            ["System.Linq.IQueryable`1"] = "code compiled at run time (expression trees)",
            ["System.Text.EncodingProvider"] = "the process's encodings",
        };

        /// <summary>Only these members of these types (the rest of the type is refused).</summary>
        static readonly Dictionary<string, string[]> DotNetMembersOnly = new Dictionary<string, string[]>
        {
            ["System.Console"] = new[] { "WriteLine", "Write" },
            ["System.Buffer"] = new[] { "BlockCopy", "ByteLength", "GetByte", "SetByte" },
            // Reflection's types, held and looked at only: never a member reached by name.
            ["System.Type"] = new[]
            {
                "GetTypeFromHandle", "op_Equality", "op_Inequality", "get_Name", "get_FullName", "get_Namespace", "ToString", "Equals",
                "GetHashCode", "IsAssignableFrom", "IsInstanceOfType", "get_IsValueType", "get_IsEnum", "get_IsArray", "get_IsClass",
                "get_IsInterface", "get_IsGenericType", "get_IsPrimitive", "GetElementType", "GetGenericArguments", "GetEnumNames",
                "get_BaseType",
            },
            ["System.Reflection.MemberInfo"] = new[] { "get_Name", "op_Equality", "op_Inequality", "ToString", "Equals", "GetHashCode" },
            ["System.Runtime.CompilerServices.RuntimeHelpers"] = new[] { "InitializeArray", "GetHashCode", "Equals", "get_OffsetToStringData" },
            // What mcs's iterators use to hand out their enumerator once.
            ["System.Threading.Interlocked"] = new[] { "CompareExchange", "Exchange", "Increment", "Decrement", "Add", "Read" },
        };

        /// <summary>What the C# compiler itself puts into an assembly, in namespaces otherwise refused.</summary>
        static readonly HashSet<string> CompilerTypes = new HashSet<string>
        {
            "System.Runtime.CompilerServices.CompilerGeneratedAttribute", "System.Runtime.CompilerServices.ExtensionAttribute",
            "System.Runtime.CompilerServices.IteratorStateMachineAttribute", "System.Runtime.CompilerServices.IsReadOnlyAttribute",
            "System.Runtime.CompilerServices.TupleElementNamesAttribute", "System.Runtime.CompilerServices.FormattableStringFactory",
            "System.Runtime.CompilerServices.CompilationRelaxationsAttribute", "System.Runtime.CompilerServices.RuntimeCompatibilityAttribute",
            "System.Runtime.CompilerServices.DecimalConstantAttribute", "System.Runtime.CompilerServices.DateTimeConstantAttribute",
            "System.Runtime.CompilerServices.IsVolatile", "System.Runtime.CompilerServices.CallerMemberNameAttribute",
            "System.Runtime.CompilerServices.CallerFilePathAttribute", "System.Runtime.CompilerServices.CallerLineNumberAttribute",
            "System.Runtime.CompilerServices.NullableAttribute", "System.Runtime.CompilerServices.NullableContextAttribute",
            "System.Runtime.CompilerServices.RefSafetyRulesAttribute", "System.Runtime.CompilerServices.RuntimeHelpers",
            "System.FormattableString",
            "System.Diagnostics.DebuggableAttribute", "System.Diagnostics.DebuggableAttribute/DebuggingModes",
            "System.Diagnostics.DebuggerHiddenAttribute", "System.Diagnostics.DebuggerStepThroughAttribute",
            "System.Diagnostics.DebuggerBrowsableAttribute", "System.Diagnostics.DebuggerBrowsableState",
            "System.Diagnostics.DebuggerDisplayAttribute", "System.Diagnostics.DebuggerNonUserCodeAttribute",
            "System.Reflection.DefaultMemberAttribute", "System.Reflection.MemberInfo",
            "System.Reflection.AssemblyTitleAttribute", "System.Reflection.AssemblyVersionAttribute",
            "System.Reflection.AssemblyFileVersionAttribute", "System.Reflection.AssemblyInformationalVersionAttribute",
            "Microsoft.CodeAnalysis.EmbeddedAttribute",
        };

        /// <summary>Members refused on an allowed .NET type, by name or by name and parameters, with why.</summary>
        static readonly Dictionary<string, string> DotNetMembersRefused = new Dictionary<string, string>
        {
            ["System.Delegate::CreateDelegate"] = "reflection (a method chosen by name)",
            ["System.Delegate::DynamicInvoke"] = "reflection",
            ["System.Delegate::get_Method"] = "reflection",
            ["System.Array::CreateInstance"] = "reflection",
            ["System.Array::Resize"] = "an array of any size at once",
            ["System.String::.ctor(System.Char,System.Int32)"] = "a string of any size at once",
            ["System.String::PadLeft"] = "a string of any size at once",
            ["System.String::PadRight"] = "a string of any size at once",
            ["System.String::Intern"] = "the process's string pool",
            ["System.Text.StringBuilder::.ctor(System.Int32)"] = "a buffer of any size at once",
            ["System.Text.StringBuilder::.ctor(System.Int32,System.Int32)"] = "a buffer of any size at once",
            ["System.Text.StringBuilder::.ctor(System.String,System.Int32)"] = "a buffer of any size at once",
            ["System.Text.StringBuilder::.ctor(System.String,System.Int32,System.Int32,System.Int32)"] = "a buffer of any size at once",
            ["System.Text.StringBuilder::Append(System.Char,System.Int32)"] = "a string of any size at once",
            ["System.Text.StringBuilder::Insert(System.Int32,System.String,System.Int32)"] = "a string of any size at once",
            ["System.Text.StringBuilder::set_Capacity"] = "a buffer of any size at once",
            ["System.Text.StringBuilder::EnsureCapacity"] = "a buffer of any size at once",
            ["System.Text.StringBuilder::set_Length"] = "a buffer of any size at once",
            ["System.Collections.Generic.List`1::.ctor(System.Int32)"] = "a buffer of any size at once",
            ["System.Collections.Generic.List`1::set_Capacity"] = "a buffer of any size at once",
            ["System.Collections.Generic.Dictionary`2::.ctor(System.Int32)"] = "a buffer of any size at once",
            ["System.Collections.Generic.HashSet`1::.ctor(System.Int32)"] = "a buffer of any size at once",
            ["System.Collections.Generic.Queue`1::.ctor(System.Int32)"] = "a buffer of any size at once",
            ["System.Collections.Generic.Stack`1::.ctor(System.Int32)"] = "a buffer of any size at once",
            ["System.Collections.Generic.SortedList`2::.ctor(System.Int32)"] = "a buffer of any size at once",
            ["System.Collections.ArrayList::.ctor(System.Int32)"] = "a buffer of any size at once",
            ["System.Collections.Hashtable::.ctor(System.Int32)"] = "a buffer of any size at once",
            ["System.Globalization.CultureInfo::set_CurrentCulture"] = "the Editor's culture (every number it prints)",
            ["System.Globalization.CultureInfo::set_CurrentUICulture"] = "the Editor's culture",
            ["System.Globalization.CultureInfo::set_DefaultThreadCurrentCulture"] = "the Editor's culture",
            ["System.Globalization.CultureInfo::set_DefaultThreadCurrentUICulture"] = "the Editor's culture",
            ["System.Text.RegularExpressions.Regex::set_CacheSize"] = "the process's regular expression cache",
            ["System.Text.Encoding::RegisterProvider"] = "the process's encodings",
            ["System.Lazy`1::.ctor(System.Func`1<T>,System.Threading.LazyThreadSafetyMode)"] = "threads",
        };

        // ---- Unity ----

        /// <summary>Unity's types allowed with every public member (but for events and those refused below), by purpose.</summary>
        static readonly HashSet<string> UnityTypesWhole = new HashSet<string>
        {
            // Values: vectors, colours, shapes, curves, random numbers.
            "UnityEngine.Vector2", "UnityEngine.Vector3", "UnityEngine.Vector4", "UnityEngine.Vector2Int", "UnityEngine.Vector3Int",
            "UnityEngine.Quaternion", "UnityEngine.Matrix4x4", "UnityEngine.Color", "UnityEngine.Color32", "UnityEngine.Rect",
            "UnityEngine.RectInt", "UnityEngine.Bounds", "UnityEngine.BoundsInt", "UnityEngine.Ray", "UnityEngine.Ray2D",
            "UnityEngine.Plane", "UnityEngine.RaycastHit", "UnityEngine.RaycastHit2D", "UnityEngine.LayerMask", "UnityEngine.Mathf",
            "UnityEngine.Keyframe", "UnityEngine.AnimationCurve", "UnityEngine.Gradient", "UnityEngine.GradientColorKey",
            "UnityEngine.GradientAlphaKey", "UnityEngine.Pose", "UnityEngine.Random", "UnityEngine.EntityId",
            // The open scenes: their GameObjects (components: see IsComponent).
            "UnityEngine.GameObject", "UnityEngine.SceneManagement.Scene",
            // The data of assets.
            "UnityEngine.ScriptableObject", "UnityEngine.Mesh", "UnityEngine.Material", "UnityEngine.Texture", "UnityEngine.Texture2D",
            "UnityEngine.Sprite", "UnityEngine.PhysicsMaterial", "UnityEngine.PhysicMaterial", "UnityEngine.AnimationClip",
            "UnityEditor.SerializedObject", "UnityEditor.SerializedProperty", "UnityEditor.Undo", "UnityEditor.Selection",
            "UnityEditor.ObjectFactory",
        };

        /// <summary>Only these members of these Unity types (a trailing * is a prefix).</summary>
        static readonly Dictionary<string, string[]> UnityMembersOnly = new Dictionary<string, string[]>
        {
            ["UnityEngine.Object"] = new[]
            {
                "get_name", "set_name", "get_hideFlags", "set_hideFlags", "ToString", "GetInstanceID", "GetEntityId", "Equals", "GetHashCode",
                "op_Implicit", "op_Equality", "op_Inequality", "Instantiate", "Destroy", "DestroyImmediate", "FindObjectsByType",
                "FindObjectsOfType", "FindObjectOfType", "FindAnyObjectByType", "FindFirstObjectByType", ".ctor",
            },
            ["UnityEngine.Debug"] = new[]
            {
                "Log", "LogWarning", "LogError", "LogFormat", "LogWarningFormat", "LogErrorFormat", "LogException", "Assert", "AssertFormat",
                "DrawLine", "DrawRay", "get_isDebugBuild",
            },
            ["UnityEngine.Application"] = new[] { "get_isPlaying", "get_isEditor", "get_unityVersion", "get_productName", "get_companyName", "get_platform", "get_version" },
            ["UnityEngine.Time"] = new[] { "get_*" },
            ["UnityEngine.Shader"] = new[] { "Find", "PropertyToID", "get_name", "get_isSupported" },
            ["UnityEngine.Resources"] = new[] { "FindObjectsOfTypeAll", "Load", "LoadAll", "GetBuiltinResource" },
            ["UnityEngine.Physics"] = new[] { "Raycast*", "Linecast*", "SphereCast*", "BoxCast*", "CapsuleCast*", "Overlap*", "Check*", "ClosestPoint", "ComputePenetration", "get_gravity" },
            ["UnityEngine.Physics2D"] = new[] { "Raycast*", "Linecast*", "CircleCast*", "BoxCast*", "CapsuleCast*", "Overlap*", "GetRayIntersection*", "get_gravity" },
            ["UnityEngine.SceneManagement.SceneManager"] = new[]
            {
                "GetActiveScene", "GetSceneAt", "GetSceneByName", "GetSceneByPath", "GetSceneByBuildIndex", "get_sceneCount", "get_loadedSceneCount",
                "SetActiveScene", "MoveGameObjectToScene",
            },
            ["UnityEditor.SceneManagement.EditorSceneManager"] = new[] { "MarkSceneDirty", "MarkAllScenesDirty", "SaveScene", "SaveOpenScenes", "GetActiveScene", "get_loadedSceneCount" },
            ["UnityEditor.AssetDatabase"] = new[]
            {
                "LoadAssetAtPath", "LoadMainAssetAtPath", "LoadAllAssetsAtPath", "LoadAllAssetRepresentationsAtPath", "FindAssets", "GetAssetPath",
                "AssetPathToGUID", "GUIDToAssetPath", "GetMainAssetTypeAtPath", "IsValidFolder", "GetSubFolders", "Contains", "IsMainAsset",
                "IsSubAsset", "IsNativeAsset", "IsForeignAsset", "GetLabels", "GetDependencies", "GetAllAssetPaths", "SaveAssets",
                "SaveAssetIfDirty", "TryGetGUIDAndLocalFileIdentifier",
            },
            ["UnityEditor.EditorUtility"] = new[]
            {
                "SetDirty", "IsDirty", "IsPersistent", "GetDirtyCount", "InstanceIDToObject", "EntityIdToObject", "CopySerialized",
                "CopySerializedIfDifferent", "FormatBytes", "CollectDependencies", "CollectDeepHierarchy",
            },
            ["UnityEditor.PrefabUtility"] = new[]
            {
                "InstantiatePrefab", "GetCorrespondingObjectFromSource", "GetCorrespondingObjectFromOriginalSource", "GetPrefabAssetType",
                "GetPrefabInstanceStatus", "IsPartOf*", "IsAnyPrefabInstanceRoot", "IsOutermostPrefabInstanceRoot", "GetOutermostPrefabInstanceRoot",
                "GetNearestPrefabInstanceRoot", "GetPrefabAssetPathOfNearestInstanceRoot", "RecordPrefabInstancePropertyModifications",
                "ApplyPrefabInstance", "ApplyPropertyOverride", "ApplyAddedComponent", "ApplyRemovedComponent", "ApplyAddedGameObject",
                "RevertPrefabInstance", "RevertPropertyOverride", "UnpackPrefabInstance", "HasPrefabInstanceAnyOverrides", "GetObjectOverrides",
                "GetAddedComponents", "GetRemovedComponents", "GetAddedGameObjects",
            },
            ["UnityEditor.EditorApplication"] = new[] { "get_isPlaying", "get_isPaused", "get_isCompiling", "get_isUpdating", "get_timeSinceStartup" },
        };

        /// <summary>Members refused on Unity's allowed types, by name, with why.</summary>
        static readonly Dictionary<string, string> UnityMembersRefused = new Dictionary<string, string>
        {
            ["SendMessage"] = "a method of the project's called by name",
            ["SendMessageUpwards"] = "a method of the project's called by name",
            ["BroadcastMessage"] = "a method of the project's called by name",
            ["Invoke"] = "a method called by name, later",
            ["InvokeRepeating"] = "a method called by name, later",
            ["StartCoroutine"] = "work that goes on after the call",
            ["ClearAll"] = "the user's undo history",
            ["ClearUndo"] = "the user's undo history",
            ["PerformUndo"] = "the user's undo history",
            ["PerformRedo"] = "the user's undo history",
        };

        // ---- decisions ----

        /// <summary>Why a type may not be used, or null.</summary>
        public string TypeRefused(TypeReference reference)
        {
            var type = reference.GetElementType();
            if (type is TypeDefinition)
            {
                // The snippet's own (its shape is RestrictedCode's business).
                return null;
            }
            var full = FullName(type);
            var outer = type;
            while (outer.DeclaringType != null)
            {
                outer = outer.DeclaringType;
            }
            var ns = outer.Namespace ?? "";
            if (CompilerTypes.Contains(full) || DotNetMembersOnly.ContainsKey(full))
            {
                return null;
            }
            string why;
            if (DotNetTypesRefused.TryGetValue(full, out why))
            {
                return why;
            }
            if (IsUnity(ns))
            {
                return UnityTypeAllowed(type, full) ? null : "not on Restricted's allow-list: see its purposes in docs/dynamic-code.md";
            }
            if (ns == "System")
            {
                var name = outer.Name;
                return SystemTypes.Contains(name) || name.StartsWith("Func`", StringComparison.Ordinal) || name.StartsWith("Action", StringComparison.Ordinal)
                    || name.StartsWith("Tuple`", StringComparison.Ordinal) || name.StartsWith("ValueTuple`", StringComparison.Ordinal)
                    ? null : Area(name);
            }
            if (DotNetNamespaces.Contains(ns))
            {
                return null;
            }
            if (IsDotNet(ns))
            {
                return Area(ns);
            }
            // The project's own types: named, cast to, their fields used (members: MemberRefused).
            return null;
        }

        /// <summary>Why a member may not be used, or null.</summary>
        public string MemberRefused(MemberReference member)
        {
            var declaring = member.DeclaringType.GetElementType();
            if (declaring is TypeDefinition)
            {
                return null;
            }
            var full = FullName(declaring);
            var why = TypeRefused(declaring);
            if (why != null)
            {
                return why;
            }
            var outer = declaring;
            while (outer.DeclaringType != null)
            {
                outer = outer.DeclaringType;
            }
            var ns = outer.Namespace ?? "";
            var name = member.Name;
            if (IsUnity(ns))
            {
                return UnityMemberRefused(member, full, name);
            }
            if (!IsDotNet(ns) && !CompilerTypes.Contains(full))
            {
                // The project's code: its fields are data; its methods could do anything.
                return member is FieldReference ? null : "the project's own code, which Restricted cannot vouch for (its fields may be read and written)";
            }
            if (DotNetMembersRefused.TryGetValue(full + "::" + name, out why) || DotNetMembersRefused.TryGetValue(full + "::" + name + Parameters(member), out why))
            {
                return why;
            }
            string[] only;
            if (DotNetMembersOnly.TryGetValue(full, out only) && !Matches(only, name))
            {
                return full.StartsWith("System.Reflection", StringComparison.Ordinal) || full == "System.Type"
                    ? "reflection: members reached by name" : "not on Restricted's allow-list";
            }
            return null;
        }

        bool UnityTypeAllowed(TypeReference type, string full)
        {
            if (UnityTypesWhole.Contains(full) || UnityMembersOnly.ContainsKey(full) || full == "UnityEngine.Component")
            {
                return true;
            }
            var definition = Resolve(type);
            // Values of Unity's enums (PrimitiveType, HideFlags …) carry no behaviour.
            return definition != null && (definition.IsEnum || IsComponent(definition));
        }

        string UnityMemberRefused(MemberReference member, string full, string name)
        {
            if (name.StartsWith("add_", StringComparison.Ordinal) || name.StartsWith("remove_", StringComparison.Ordinal))
            {
                return "a callback that would run after the call";
            }
            // A delegate field (EditorApplication.delayCall, Selection.selectionChanged) is a callback too.
            var field = member as FieldReference;
            if (field != null && IsDelegate(field.FieldType))
            {
                return "a callback that would run after the call";
            }
            string why;
            if (UnityMembersRefused.TryGetValue(name, out why))
            {
                return why;
            }
            string[] only;
            if (UnityMembersOnly.TryGetValue(full, out only))
            {
                return Matches(only, name) ? null : "not among " + full + "'s members Restricted allows (docs/dynamic-code.md)";
            }
            return null;
        }

        static bool Matches(string[] allowed, string name)
        {
            foreach (var entry in allowed)
            {
                if (entry.EndsWith("*", StringComparison.Ordinal) ? name.StartsWith(entry.Substring(0, entry.Length - 1), StringComparison.Ordinal) : entry == name)
                {
                    return true;
                }
            }
            return false;
        }

        bool IsDelegate(TypeReference type)
        {
            var definition = Resolve(type);
            var baseType = definition == null ? null : definition.BaseType;
            return baseType != null && (baseType.FullName == "System.MulticastDelegate" || baseType.FullName == "System.Delegate");
        }

        /// <summary>Whether Unity declares this type as a subclass of UnityEngine.Component.</summary>
        bool IsComponent(TypeDefinition type)
        {
            bool known;
            if (components.TryGetValue(type.FullName, out known))
            {
                return known;
            }
            var result = false;
            var current = type;
            for (var guard = 0; current != null && guard < 64; guard++)
            {
                if (current.FullName == "UnityEngine.Component")
                {
                    result = true;
                    break;
                }
                current = current.BaseType == null ? null : Resolve(current.BaseType);
            }
            components[type.FullName] = result;
            return result;
        }

        TypeDefinition Resolve(TypeReference type)
        {
            try
            {
                return type.Resolve();
            }
            catch (Exception e) when (e is AssemblyResolutionException || e is System.IO.IOException || e is BadImageFormatException || e is NotSupportedException)
            {
                return null;
            }
        }

        static string Parameters(MemberReference member)
        {
            var method = member as MethodReference;
            return method == null ? "" : "(" + string.Join(",", method.Parameters.Select(p => p.ParameterType.FullName).ToArray()) + ")";
        }

        static bool IsUnity(string ns)
        {
            var root = ns.Split('.')[0];
            return root == "UnityEngine" || root == "UnityEditor" || root == "UnityEditorInternal" || root == "Unity" || root == "TMPro";
        }

        static bool IsDotNet(string ns)
        {
            var root = ns.Split('.')[0];
            return root == "System" || root == "Microsoft" || root == "Mono" || root == "Newtonsoft" || root == "NUnit" || root == "UnityMcp";
        }

        /// <summary>Which of the refused areas a namespace or System type is in, in words.</summary>
        static string Area(string name)
        {
            if (name.StartsWith("System.IO", StringComparison.Ordinal))
            {
                return "the file system";
            }
            if (name.StartsWith("System.Net", StringComparison.Ordinal))
            {
                return "the network";
            }
            if (name.StartsWith("System.Diagnostics", StringComparison.Ordinal))
            {
                return "processes";
            }
            if (name.StartsWith("System.Reflection", StringComparison.Ordinal) || name == "Activator" || name == "AppDomain"
                || name.StartsWith("Microsoft.CSharp", StringComparison.Ordinal) || name.StartsWith("System.Linq.Expressions", StringComparison.Ordinal)
                || name.StartsWith("System.Runtime.Serialization", StringComparison.Ordinal))
            {
                return "reflection";
            }
            if (name.StartsWith("System.Runtime.InteropServices", StringComparison.Ordinal) || name == "IntPtr" || name == "UIntPtr"
                || name == "TypedReference" || name == "RuntimeMethodHandle" || name == "ArgIterator" || name == "RuntimeArgumentHandle"
                || name.StartsWith("System.Runtime.CompilerServices", StringComparison.Ordinal))
            {
                return "native code or raw memory";
            }
            if (name.StartsWith("System.Threading", StringComparison.Ordinal) || name == "GC")
            {
                return "threads or work after the call";
            }
            if (name == "Environment" || name == "AppContext")
            {
                return "the process";
            }
            return "not on Restricted's allow-list";
        }

        /// <summary>A type's name with its namespace (nested types after /).</summary>
        public static string FullName(TypeReference type)
        {
            return type.DeclaringType != null ? FullName(type.DeclaringType) + "/" + type.Name : (type.Namespace.Length > 0 ? type.Namespace + "." : "") + type.Name;
        }
    }
}
