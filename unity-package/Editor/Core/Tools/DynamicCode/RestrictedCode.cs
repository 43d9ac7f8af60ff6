// The Restricted level of execute-dynamic-code (§6), decided on what the
// compiled snippet is and what it uses, never on its text (a name check on
// source is beaten by reflection by string, \u escapes, aliases, preprocessor
// tricks, and code that closes the snippet's method to declare types of its
// own). Read with Mono.Cecil: every type the snippet declares (its layout,
// fields, finalizers, static state), every method body (each instruction),
// and every type and member it uses from another assembly (the TypeRef,
// MemberRef and MethodSpec tables), which must be on the allow-list
// RestrictedPolicy states by purpose (docs/dynamic-code.md has the table).

using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using Mono.Cecil;
using Mono.Cecil.Cil;

namespace UnityMcp.Core
{
    /// <summary>What Restricted code may be and use.</summary>
    public static class RestrictedCode
    {
        /// <summary>The answer to a refused snippet.</summary>
        public static string Refusal(string violation, DynamicCodeSecurityLevel level = DynamicCodeSecurityLevel.Restricted)
        {
            return level == DynamicCodeSecurityLevel.Restricted
                ? "Security violation: the code " + violation + ", which is not allowed at security level Restricted (it may read and change the open scenes, their GameObjects and components, and the data of assets; not the file system, the network, processes, native code, threads, settings, packages or scripts)"
                : "Security violation: the code " + violation + ", which no security level allows (it could take the Editor down where nothing can catch it)";
        }

        /// <summary>What no level runs: a finalizer (an exception in one ends the Editor's process).</summary>
        public static string UnsafeAtEveryLevel(byte[] image)
        {
            var module = ModuleDefinition.ReadModule(new MemoryStream(image));
            foreach (var type in module.GetTypes())
            {
                var finalizer = type.Methods.FirstOrDefault(IsFinalizer);
                if (finalizer != null)
                {
                    return "declares a finalizer (" + type.Name + ".Finalize: an exception in it ends the process)";
                }
            }
            return null;
        }

        static bool IsFinalizer(MethodDefinition m) => m.Name == "Finalize" && m.IsVirtual && !m.HasParameters && m.ReturnType.MetadataType == MetadataType.Void;

        /// <summary>
        /// The first thing the compiled snippet is or uses that Restricted
        /// refuses, in words ("uses System.IO.File.ReadAllText (the file
        /// system)"); null when there is none. <paramref name="references"/>
        /// are the assemblies it was compiled against (where the types it
        /// uses are looked up, to tell a component from anything else).
        /// </summary>
        public static string Violation(byte[] image, IEnumerable<string> references, ICollection<string> preambleTypes = null)
        {
            var resolver = new DefaultAssemblyResolver();
            foreach (var directory in references.Where(Path.IsPathRooted).Select(Path.GetDirectoryName).Where(d => !string.IsNullOrEmpty(d)).Distinct())
            {
                resolver.AddSearchDirectory(directory);
            }
            var module = ModuleDefinition.ReadModule(new MemoryStream(image), new ReaderParameters { AssemblyResolver = resolver });
            var policy = new RestrictedPolicy();
            return Structure(module, preambleTypes ?? new string[0]) ?? Bodies(module) ?? References(module, policy);
        }

        /// <summary>What the snippet's own types are: refused shapes.</summary>
        static string Structure(ModuleDefinition module, ICollection<string> preambleTypes)
        {
            foreach (var type in module.GetTypes())
            {
                if (preambleTypes.Contains(type.FullName))
                {
                    continue;
                }
                if (type.Methods.Any(IsFinalizer))
                {
                    return "declares a finalizer (" + type.Name + ".Finalize: an exception in it ends the process)";
                }
                if (type.IsExplicitLayout || type.Fields.Any(f => f.HasLayoutInfo))
                {
                    return "declares a type with explicit layout (" + type.Name + ": fields laid over each other read memory as another type)";
                }
                var pinvoke = type.Methods.FirstOrDefault(m => m.IsPInvokeImpl || m.IsInternalCall || m.IsUnmanaged);
                if (pinvoke != null)
                {
                    return "declares " + type.Name + "." + pinvoke.Name + " (a DllImport: native code)";
                }
                var generated = IsCompilerGenerated(type);
                if (!generated && !EmbeddedByCompiler(type) && ForeignNamespace(type))
                {
                    return "declares " + type.FullName + " (a type in a namespace that is not the snippet's)";
                }
                if (type.Name == "<Module>" && type.Methods.Any(m => m.IsConstructor && m.IsStatic))
                {
                    return "declares a module initializer (code that runs when the snippet's assembly loads)";
                }
                if (generated)
                {
                    continue;
                }
                // mcs caches a lambda in a static field of its own (<>f__am$cache0).
                var field = type.Fields.FirstOrDefault(f => f.IsStatic && !f.IsLiteral && !(f.Name.StartsWith("<", StringComparison.Ordinal)
                    && f.CustomAttributes.Any(a => a.AttributeType.FullName == "System.Runtime.CompilerServices.CompilerGeneratedAttribute")));
                if (field != null)
                {
                    return "declares a static field (" + type.Name + "." + field.Name + ": state that outlives the call)";
                }
                foreach (var member in type.Fields.Select(f => f.FieldType).Concat(type.Methods.SelectMany(Signature)))
                {
                    if (IsPointer(member))
                    {
                        return "uses a pointer (" + member.FullName + " in " + type.Name + ": memory outside any object)";
                    }
                }
                var async = type.Methods.FirstOrDefault(m => m.ReturnType.MetadataType == MetadataType.Void
                    && m.CustomAttributes.Any(a => a.AttributeType.FullName == "System.Runtime.CompilerServices.AsyncStateMachineAttribute"));
                if (async != null)
                {
                    return "declares an async void method (" + type.Name + "." + async.Name + ": it goes on after the call has returned)";
                }
            }
            return null;
        }

        /// <summary>Every instruction of every method: refused operations.</summary>
        static string Bodies(ModuleDefinition module)
        {
            foreach (var type in module.GetTypes())
            {
                foreach (var method in type.Methods.Where(m => m.HasBody))
                {
                    var where = type.Name + "." + method.Name;
                    if (method.Body.Variables.Any(v => IsPointer(v.VariableType) || v.VariableType.IsPinned))
                    {
                        return "uses a pointer (a local of " + where + ": memory outside any object)";
                    }
                    var instructions = method.Body.Instructions;
                    for (var i = 0; i < instructions.Count; i++)
                    {
                        var instruction = instructions[i];
                        string why;
                        if (Unverifiable.TryGetValue(instruction.OpCode.Code, out why))
                        {
                            return "uses " + instruction.OpCode.Name + " in " + where + " (" + why + ")";
                        }
                        var code = instruction.OpCode.Code;
                        if ((code == Code.Ldftn || code == Code.Ldvirtftn) && !MakesDelegate(instructions, i))
                        {
                            return "uses " + instruction.OpCode.Name + " in " + where + " (a method's address outside a delegate: a call no type checks)";
                        }
                        var operandType = instruction.Operand as TypeReference;
                        if (operandType != null && IsPointer(operandType))
                        {
                            return "uses a pointer (" + operandType.FullName + " in " + where + ")";
                        }
                    }
                }
            }
            return null;
        }

        /// <summary>Whether the method address loaded at <paramref name="i"/> goes straight into a delegate's constructor.</summary>
        static bool MakesDelegate(IList<Instruction> instructions, int i)
        {
            if (i + 1 >= instructions.Count || instructions[i + 1].OpCode.Code != Code.Newobj)
            {
                return false;
            }
            var constructor = instructions[i + 1].Operand as MethodReference;
            return constructor != null && constructor.Name == ".ctor" && constructor.Parameters.Count == 2
                && constructor.Parameters[1].ParameterType.MetadataType == MetadataType.IntPtr;
        }

        /// <summary>Operations that read or write memory no type checks, with why.</summary>
        static readonly Dictionary<Code, string> Unverifiable = new Dictionary<Code, string>
        {
            [Code.Calli] = "a call through a raw function pointer",
            [Code.Localloc] = "stack memory of any size",
            [Code.Cpblk] = "raw memory copied",
            [Code.Initblk] = "raw memory written",
            [Code.Mkrefany] = "a typed reference, which reads a value as any type",
            [Code.Refanyval] = "a typed reference, which reads a value as any type",
            [Code.Refanytype] = "a typed reference",
            [Code.Arglist] = "a variable argument list",
            [Code.Jmp] = "a jump into another method",
            [Code.Unaligned] = "raw memory access",
            [Code.Cpobj] = "raw memory copied",
            [Code.Sizeof] = "raw memory sizes",
        };

        static IEnumerable<TypeReference> Signature(MethodDefinition method)
        {
            yield return method.ReturnType;
            foreach (var p in method.Parameters)
            {
                yield return p.ParameterType;
            }
        }

        static bool IsPointer(TypeReference type)
        {
            for (var current = type; current != null; current = (current as TypeSpecification)?.ElementType)
            {
                if (current.IsPointer || current.IsFunctionPointer || current.IsPinned)
                {
                    return true;
                }
                var generic = current as GenericInstanceType;
                if (generic != null && generic.GenericArguments.Any(IsPointer))
                {
                    return true;
                }
                if (!(current is TypeSpecification))
                {
                    break;
                }
            }
            return false;
        }

        static bool IsCompilerGenerated(TypeDefinition type)
        {
            for (var current = type; current != null; current = current.DeclaringType)
            {
                if (current.CustomAttributes.Any(a => a.AttributeType.FullName == "System.Runtime.CompilerServices.CompilerGeneratedAttribute")
                    && current.Name.StartsWith("<", StringComparison.Ordinal))
                {
                    return true;
                }
            }
            return false;
        }

        /// <summary>The attributes Roslyn embeds in what it compiles (Unity's compiler): declared by it, by these names only.</summary>
        static readonly HashSet<string> Embedded = new HashSet<string>
        {
            "Microsoft.CodeAnalysis.EmbeddedAttribute",
            "System.Runtime.CompilerServices.NullableAttribute",
            "System.Runtime.CompilerServices.NullableContextAttribute",
            "System.Runtime.CompilerServices.NullablePublicOnlyAttribute",
            "System.Runtime.CompilerServices.IsReadOnlyAttribute",
            "System.Runtime.CompilerServices.IsByRefLikeAttribute",
            "System.Runtime.CompilerServices.IsUnmanagedAttribute",
            "System.Runtime.CompilerServices.RefSafetyRulesAttribute",
            "System.Runtime.CompilerServices.ScopedRefAttribute",
        };

        static bool EmbeddedByCompiler(TypeDefinition type) => Embedded.Contains(type.FullName);

        static bool ForeignNamespace(TypeDefinition type)
        {
            var outer = type;
            while (outer.DeclaringType != null)
            {
                outer = outer.DeclaringType;
            }
            var root = (outer.Namespace ?? "").Split('.')[0];
            return root == "System" || root == "Microsoft" || root == "Mono" || root == "Unity" || root.StartsWith("UnityE", StringComparison.Ordinal)
                || root == "UnityMcp";
        }

        /// <summary>Every type and member used from another assembly: on the allow-list, or refused.</summary>
        static string References(ModuleDefinition module, RestrictedPolicy policy)
        {
            foreach (var reference in module.GetTypeReferences())
            {
                var why = policy.TypeRefused(reference);
                if (why != null)
                {
                    return "uses " + RestrictedPolicy.FullName(reference) + " (" + why + ")";
                }
            }
            foreach (var member in module.GetMemberReferences())
            {
                var why = policy.MemberRefused(member);
                if (why != null)
                {
                    return "uses " + RestrictedPolicy.FullName(member.DeclaringType.GetElementType()) + "." + member.Name + " (" + why + ")";
                }
            }
            return null;
        }
    }
}
