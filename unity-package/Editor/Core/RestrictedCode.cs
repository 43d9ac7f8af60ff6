// The Restricted level of execute-dynamic-code (§6), enforced on what the
// compiled snippet references, not on its text: a name check on source is
// beaten by reflection by string, \u escapes in identifiers, aliases,
// preprocessor tricks and fully qualified names. Every type and member the
// assembly uses from another assembly is in its metadata (the TypeRef and
// MemberRef tables), read here with Mono.Cecil (com.unity.nuget.mono-cecil
// in Unity, libmono-cecil-cil-dev under Debian's mono), and must be on an
// allow-list that leaves out the file system, processes, the network,
// reflection's entry points, threads and native code. A P/Invoke method of
// its own is native code too.

using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using Mono.Cecil;

namespace UnityMcp.Core
{
    /// <summary>What Restricted code may reference.</summary>
    public static class RestrictedCode
    {
        /// <summary>Namespaces whose types may be used (but for <see cref="DeniedTypes"/>).</summary>
        static readonly HashSet<string> AllowedNamespaces = new HashSet<string>
        {
            "System.Collections", "System.Collections.Generic", "System.Collections.ObjectModel", "System.Collections.Specialized",
            "System.Linq", "System.Text", "System.Text.RegularExpressions", "System.Globalization",
            // What the C# compiler emits: attributes, RuntimeHelpers, string
            // interpolation and iterator helpers (Unsafe is denied below).
            "System.Runtime.CompilerServices",
        };

        /// <summary>Namespace roots whose every namespace may be used (but for the denied ones).</summary>
        static readonly string[] AllowedRoots = { "UnityEngine", "UnityEditor", "Unity.Mathematics" };

        /// <summary>The types of namespace System that may be used.</summary>
        static readonly HashSet<string> AllowedSystemTypes = new HashSet<string>
        {
            "Object", "String", "ValueType", "Enum", "Void", "Boolean", "Char", "SByte", "Byte", "Int16", "UInt16", "Int32", "UInt32",
            "Int64", "UInt64", "Single", "Double", "Decimal", "DateTime", "DateTimeOffset", "DateTimeKind", "TimeSpan", "Guid", "Math",
            "MathF", "MidpointRounding", "Random", "Convert", "BitConverter", "Array", "Nullable", "Nullable`1", "Tuple", "ValueTuple",
            "Predicate`1", "Comparison`1", "Converter`2", "Delegate", "MulticastDelegate", "IDisposable", "IComparable", "IComparable`1",
            "IEquatable`1", "IFormattable", "IFormatProvider", "ICloneable", "EventArgs", "EventHandler", "EventHandler`1",
            "StringComparison", "StringComparer", "StringSplitOptions", "Attribute", "AttributeUsageAttribute", "AttributeTargets",
            "ObsoleteAttribute", "FlagsAttribute", "SerializableAttribute", "NonSerializedAttribute", "ParamArrayAttribute",
            "DayOfWeek", "Lazy`1", "Console", "Type", "RuntimeTypeHandle", "RuntimeFieldHandle", "RuntimeMethodHandle",
            "Exception", "SystemException", "ArgumentException", "ArgumentNullException", "ArgumentOutOfRangeException",
            "InvalidOperationException", "NotSupportedException", "NotImplementedException", "FormatException", "OverflowException",
            "IndexOutOfRangeException", "NullReferenceException", "InvalidCastException", "DivideByZeroException",
            "ArithmeticException", "KeyNotFoundException", "ObjectDisposedException", "AggregateException", "Span`1", "ReadOnlySpan`1",
        };

        /// <summary>Types refused even in an allowed namespace, with why.</summary>
        static readonly Dictionary<string, string> DeniedTypes = new Dictionary<string, string>
        {
            ["System.Runtime.CompilerServices.Unsafe"] = "raw memory access",
            ["UnityEditor.FileUtil"] = "the file system",
            ["UnityEngine.WWW"] = "the network",
            ["UnityEngine.WWWForm"] = "the network",
            ["UnityEditor.BuildPipeline"] = "the file system",
        };

        /// <summary>Namespaces refused even under an allowed root.</summary>
        static readonly string[] DeniedNamespaces = { "UnityEngine.Networking", "UnityEngine.Windows", "UnityEditor.VersionControl" };

        /// <summary>Members refused on an allowed type, with why.</summary>
        static readonly Dictionary<string, string> DeniedMembers = new Dictionary<string, string>
        {
            ["System.Delegate::CreateDelegate"] = "reflection (a method chosen by name)",
            ["System.Delegate::DynamicInvoke"] = "reflection",
            ["System.Delegate::get_Method"] = "reflection",
            ["UnityEngine.Application::OpenURL"] = "opening other programs",
            ["UnityEngine.Application::Quit"] = "quitting the Editor",
            ["UnityEditor.EditorApplication::Exit"] = "quitting the Editor",
            ["UnityEditor.EditorUtility::OpenWithDefaultApp"] = "opening other programs",
            ["UnityEditor.EditorUtility::RevealInFinder"] = "opening other programs",
            ["UnityEditor.EditorApplication::ExecuteMenuItem"] = "menu items (execute-menu-item's own setting)",
            ["UnityEditor.EditorApplication::OpenProject"] = "quitting the Editor",
            ["UnityEditor.AssetDatabase::ExportPackage"] = "the file system",
            ["UnityEditor.AssetDatabase::ImportPackage"] = "the file system",
            ["UnityEngine.ScreenCapture::CaptureScreenshot"] = "the file system",
        };

        /// <summary>
        /// Reflection's types Restricted code may hold, and the members it may
        /// use on them: a type looked at (typeof(T).Name), never a member
        /// reached by name, an assembly or a method to invoke.
        /// </summary>
        static readonly Dictionary<string, HashSet<string>> LookOnlyTypes = new Dictionary<string, HashSet<string>>
        {
            ["System.Type"] = new HashSet<string>
            {
                "GetTypeFromHandle", "op_Equality", "op_Inequality", "get_Name", "get_FullName", "get_Namespace", "ToString", "Equals",
                "GetHashCode", "IsAssignableFrom", "IsInstanceOfType", "get_IsValueType", "get_IsEnum", "get_IsArray", "get_IsClass",
                "get_IsInterface", "get_IsGenericType", "get_IsPrimitive", "GetElementType", "GetGenericArguments", "GetEnumNames",
                "GetEnumValues", "get_BaseType",
            },
            ["System.Reflection.MemberInfo"] = new HashSet<string>
            {
                "get_Name", "op_Equality", "op_Inequality", "ToString", "Equals", "GetHashCode",
            },
        };

        /// <summary>The first thing the compiled assembly uses that Restricted refuses, in words; null when there is none.</summary>
        public static string Violation(byte[] assembly)
        {
            var module = ModuleDefinition.ReadModule(new MemoryStream(assembly));
            foreach (var type in module.GetTypes())
            {
                foreach (var method in type.Methods.Where(m => m.IsPInvokeImpl))
                {
                    return type.Name + "." + method.Name + " (a DllImport: native code)";
                }
            }
            foreach (var reference in module.GetTypeReferences())
            {
                var why = Refused(reference);
                if (why != null)
                {
                    return FullName(reference) + " (" + why + ")";
                }
            }
            foreach (var member in module.GetMemberReferences())
            {
                var declaring = member.DeclaringType.GetElementType();
                var key = FullName(declaring) + "::" + member.Name;
                string why;
                if (DeniedMembers.TryGetValue(key, out why))
                {
                    return FullName(declaring) + "." + member.Name + " (" + why + ")";
                }
                HashSet<string> lookOnly;
                if (LookOnlyTypes.TryGetValue(FullName(declaring), out lookOnly))
                {
                    if (!lookOnly.Contains(member.Name))
                    {
                        return FullName(declaring) + "." + member.Name + " (reflection: members reached by name)";
                    }
                    continue;
                }
                why = Refused(declaring);
                if (why != null)
                {
                    return FullName(declaring) + "." + member.Name + " (" + why + ")";
                }
            }
            return null;
        }

        /// <summary>Why a type may not be used, or null.</summary>
        static string Refused(TypeReference reference)
        {
            var type = reference.GetElementType();
            var outer = type;
            while (outer.DeclaringType != null)
            {
                outer = outer.DeclaringType;
            }
            var ns = outer.Namespace ?? "";
            if (LookOnlyTypes.ContainsKey(FullName(outer)))
            {
                // Held and looked at only: their members are checked one by one.
                return null;
            }
            string why;
            if (DeniedTypes.TryGetValue(FullName(outer), out why))
            {
                return why;
            }
            if (DeniedNamespaces.Any(d => ns == d || ns.StartsWith(d + ".", StringComparison.Ordinal)))
            {
                return "the network or the operating system";
            }
            if (ns == "System")
            {
                return AllowedSystemTypes.Contains(outer.Name) || outer.Name.StartsWith("Func`", StringComparison.Ordinal)
                    || outer.Name.StartsWith("Action", StringComparison.Ordinal) || outer.Name.StartsWith("Tuple`", StringComparison.Ordinal)
                    || outer.Name.StartsWith("ValueTuple`", StringComparison.Ordinal)
                    ? null : Area(outer.Name);
            }
            if (AllowedNamespaces.Contains(ns) || AllowedRoots.Any(r => ns == r || ns.StartsWith(r + ".", StringComparison.Ordinal)))
            {
                return null;
            }
            // Attributes the compiler puts on every assembly.
            if ((ns == "System.Reflection" || ns == "System.Diagnostics") && outer.Name.EndsWith("Attribute", StringComparison.Ordinal))
            {
                return null;
            }
            return Area(ns);
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
                || name.StartsWith("Microsoft.CSharp", StringComparison.Ordinal) || name.StartsWith("System.Linq.Expressions", StringComparison.Ordinal))
            {
                return "reflection";
            }
            if (name.StartsWith("System.Runtime.InteropServices", StringComparison.Ordinal) || name == "IntPtr" || name == "UIntPtr")
            {
                return "native code";
            }
            if (name.StartsWith("System.Threading", StringComparison.Ordinal))
            {
                return "threads";
            }
            return "not on Restricted's allow-list";
        }

        static string FullName(TypeReference type)
        {
            return type.DeclaringType != null ? FullName(type.DeclaringType) + "/" + type.Name : (type.Namespace.Length > 0 ? type.Namespace + "." : "") + type.Name;
        }
    }
}
