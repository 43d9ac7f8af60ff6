// A snippet's compiled IL, rewritten before it loads so that SnippetGuard
// bounds it, at every security level: every method of the snippet's
// assembly (its lambdas, iterators and local functions are methods too)
//
//   - steps and goes one frame deeper at its entry (Enter), and is told its
//     depth again at each return (Leave) and at the start of each catch,
//     filter and finally (Resume), so a caught exception leaves the count
//     right;
//   - steps before every backward branch: every way around a loop, a goto
//     included, passes one;
//   - at Restricted, reports the size of each array before `newarr`
//     allocates it, and each string or array a call returns.
//
// Only Mono.Cecil's core API is used (no Rocks), in the subset that
// Debian's Cecil 0.9.5 and Unity's com.unity.nuget.mono-cecil (0.11) share.

using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using Mono.Cecil;
using Mono.Cecil.Cil;

namespace UnityMcp.Core
{
    public static class SnippetRewriter
    {
        /// <summary>The snippet's assembly with the guard's calls in every method body, and its unbounded library calls on shims.</summary>
        public static byte[] Rewrite(byte[] image, bool countAllocations, ICollection<string> preambleTypes = null)
        {
            var module = ModuleDefinition.ReadModule(new MemoryStream(image));
            var guard = new GuardMethods(module);
            foreach (var type in module.GetTypes())
            {
                // The Editor's own code in the preamble (a Debug that logs) is not the snippet's.
                if (preambleTypes != null && preambleTypes.Contains(type.FullName))
                {
                    continue;
                }
                foreach (var method in type.Methods.Where(m => m.HasBody))
                {
                    Instrument(method, guard, countAllocations);
                }
            }
            var output = new MemoryStream();
            module.Write(output);
            return output.ToArray();
        }

        /// <summary>SnippetGuard's methods, referenced from the snippet's module.</summary>
        sealed class GuardMethods
        {
            public readonly MethodReference Step, Enter, Leave, Resume, Allocate, Counted;
            public readonly TypeReference Int32;
            readonly TypeReference shims;

            public GuardMethods(ModuleDefinition module)
            {
                var core = typeof(SnippetGuard).Assembly.GetName();
                var reference = module.AssemblyReferences.FirstOrDefault(a => a.Name == core.Name);
                if (reference == null)
                {
                    reference = new AssemblyNameReference(core.Name, core.Version);
                    module.AssemblyReferences.Add(reference);
                }
                var guard = new TypeReference(typeof(SnippetGuard).Namespace, typeof(SnippetGuard).Name, module, reference);
                shims = new TypeReference(typeof(SnippetShims).Namespace, typeof(SnippetShims).Name, module, reference);
                var ts = module.TypeSystem;
                Int32 = ts.Int32;
                Step = Static(guard, "Step", ts.Void);
                Enter = Static(guard, "Enter", ts.Int32);
                Leave = Static(guard, "Leave", ts.Void, ts.Int32);
                Resume = Static(guard, "Resume", ts.Void, ts.Int32);
                Allocate = Static(guard, "Allocate", ts.Void, ts.Int64, ts.Int32);
                Counted = new MethodReference("Counted", ts.Void, guard) { HasThis = false };
                var t = new GenericParameter("T", Counted);
                Counted.GenericParameters.Add(t);
                Counted.ReturnType = t;
                Counted.Parameters.Add(new ParameterDefinition(t));
            }

            static MethodReference Static(TypeReference type, string name, TypeReference returns, params TypeReference[] parameters)
            {
                var method = new MethodReference(name, returns, type) { HasThis = false };
                foreach (var p in parameters)
                {
                    method.Parameters.Add(new ParameterDefinition(p));
                }
                return method;
            }

            /// <summary>
            /// The shim that stands for a library call (SnippetShims.For), with
            /// the same parameters; null when there is none.
            /// </summary>
            public MethodReference ShimFor(MethodReference called, bool constructor)
            {
                if (called.HasThis && !constructor)
                {
                    return null;
                }
                var declaring = called.DeclaringType.GetElementType().FullName;
                var element = called is GenericInstanceMethod ? ((GenericInstanceMethod)called).ElementMethod : called;
                var name = SnippetShims.For(declaring, called.Name, element.Parameters.Select(p => p.ParameterType.FullName).ToArray());
                if (name == null)
                {
                    return null;
                }
                var shim = new MethodReference(name, constructor ? called.DeclaringType : element.ReturnType, shims) { HasThis = false };
                var generic = called as GenericInstanceMethod;
                if (generic == null)
                {
                    foreach (var p in element.Parameters)
                    {
                        shim.Parameters.Add(new ParameterDefinition(p.ParameterType));
                    }
                    return shim;
                }
                // Repeat<T>(T, int): the shim's own T in its signature.
                var t = new GenericParameter("T", shim);
                shim.GenericParameters.Add(t);
                var returns = (GenericInstanceType)element.ReturnType;
                var enumerable = new GenericInstanceType(returns.ElementType);
                enumerable.GenericArguments.Add(t);
                shim.ReturnType = enumerable;
                shim.Parameters.Add(new ParameterDefinition(t));
                shim.Parameters.Add(new ParameterDefinition(element.Parameters[1].ParameterType));
                var instance = new GenericInstanceMethod(shim);
                foreach (var argument in generic.GenericArguments)
                {
                    instance.GenericArguments.Add(argument);
                }
                return instance;
            }

            /// <summary>Counted&lt;T&gt; for what a call returned.</summary>
            public MethodReference CountedFor(TypeReference type)
            {
                var instance = new GenericInstanceMethod(Counted);
                instance.GenericArguments.Add(type);
                return instance;
            }
        }

        static void Instrument(MethodDefinition method, GuardMethods guard, bool countAllocations)
        {
            var body = method.Body;
            var il = body.GetILProcessor();
            LongBranches(body);
            var original = body.Instructions.ToList();
            var offsets = new Dictionary<Instruction, int>();
            for (var i = 0; i < original.Count; i++)
            {
                offsets[original[i]] = i;
            }
            var depth = new VariableDefinition(guard.Int32);
            body.Variables.Add(depth);
            body.InitLocals = true;
            // Decided before anything moves: an insertion retargets the
            // branches that pointed at its place to code the offsets do not know.
            var backward = new HashSet<Instruction>(original.Where(i => IsBackwardBranch(i, offsets, offsets[i])));

            foreach (var instruction in original)
            {
                var target = instruction.Operand as MethodReference;
                if (target != null && (instruction.OpCode.Code == Code.Call || instruction.OpCode.Code == Code.Newobj))
                {
                    var shim = guard.ShimFor(target, instruction.OpCode.Code == Code.Newobj);
                    if (shim != null)
                    {
                        instruction.OpCode = OpCodes.Call;
                        instruction.Operand = shim;
                    }
                }
                if (backward.Contains(instruction))
                {
                    InsertBefore(body, instruction, il.Create(OpCodes.Call, guard.Step));
                }
                if (instruction.OpCode.Code == Code.Ret)
                {
                    InsertBefore(body, instruction, il.Create(OpCodes.Ldloc, depth), il.Create(OpCodes.Call, guard.Leave));
                }
                if (!countAllocations)
                {
                    continue;
                }
                if (instruction.OpCode.Code == Code.Newarr)
                {
                    var size = ElementSize((TypeReference)instruction.Operand);
                    InsertBefore(body, instruction,
                        il.Create(OpCodes.Dup), il.Create(OpCodes.Conv_I8), il.Create(OpCodes.Ldc_I4, size), il.Create(OpCodes.Call, guard.Allocate));
                }
                var called = instruction.Operand as MethodReference;
                if (called != null && (instruction.OpCode.Code == Code.Call || instruction.OpCode.Code == Code.Callvirt || instruction.OpCode.Code == Code.Newobj))
                {
                    // What the call returns, in this method's terms (a
                    // callee's own T is not: ToArray<T> returns the caller's string[]).
                    var returned = Instantiated(instruction.OpCode.Code == Code.Newobj ? called.DeclaringType : called.ReturnType, called);
                    if (returned != null && (returned.MetadataType == MetadataType.String || returned.IsArray))
                    {
                        il.InsertAfter(instruction, il.Create(OpCodes.Call, guard.CountedFor(returned)));
                    }
                }
            }
            // Each catch, filter and finally runs at its method's depth.
            foreach (var handler in body.ExceptionHandlers.ToList())
            {
                if (handler.FilterStart != null)
                {
                    handler.FilterStart = InsertBefore(body, handler.FilterStart, il.Create(OpCodes.Ldloc, depth), il.Create(OpCodes.Call, guard.Resume));
                }
                handler.HandlerStart = InsertBefore(body, handler.HandlerStart, il.Create(OpCodes.Ldloc, depth), il.Create(OpCodes.Call, guard.Resume));
            }
            // The entry, where nothing jumps back to it (a loop to the first
            // instruction goes on jumping there, past Enter).
            var first = body.Instructions[0];
            il.InsertBefore(first, il.Create(OpCodes.Call, guard.Enter));
            il.InsertBefore(first, il.Create(OpCodes.Stloc, depth));
        }

        /// <summary>
        /// <paramref name="type"/>, as a signature of <paramref name="callee"/>
        /// writes it, with the callee's generic parameters replaced by the
        /// arguments the call gives them; null when that cannot be said.
        /// </summary>
        static TypeReference Instantiated(TypeReference type, MethodReference callee)
        {
            var parameter = type as GenericParameter;
            if (parameter != null)
            {
                var method = callee as GenericInstanceMethod;
                var owner = callee.DeclaringType as GenericInstanceType;
                if (parameter.MetadataType == MetadataType.MVar)
                {
                    return method != null && parameter.Position < method.GenericArguments.Count ? method.GenericArguments[parameter.Position] : null;
                }
                return owner != null && parameter.Position < owner.GenericArguments.Count ? owner.GenericArguments[parameter.Position] : null;
            }
            var array = type as ArrayType;
            if (array != null)
            {
                var element = Instantiated(array.ElementType, callee);
                return element == null ? null : element == array.ElementType ? array : new ArrayType(element, array.Rank);
            }
            var generic = type as GenericInstanceType;
            if (generic != null)
            {
                var arguments = generic.GenericArguments.Select(a => Instantiated(a, callee)).ToList();
                if (arguments.Any(a => a == null))
                {
                    return null;
                }
                var result = new GenericInstanceType(generic.ElementType);
                foreach (var argument in arguments)
                {
                    result.GenericArguments.Add(argument);
                }
                return result;
            }
            // By-reference, pointer and other specifications: not counted.
            return type is TypeSpecification ? null : type;
        }

        /// <summary>
        /// Inserts <paramref name="added"/> before <paramref name="at"/>, and
        /// moves to the first of them every branch and every block boundary
        /// that pointed at <paramref name="at"/>; the first added.
        /// </summary>
        static Instruction InsertBefore(MethodBody body, Instruction at, params Instruction[] added)
        {
            var il = body.GetILProcessor();
            foreach (var instruction in added)
            {
                il.InsertBefore(at, instruction);
            }
            var first = added[0];
            foreach (var instruction in body.Instructions)
            {
                if (instruction.Operand == at && !added.Contains(instruction))
                {
                    instruction.Operand = first;
                }
                var targets = instruction.Operand as Instruction[];
                if (targets != null)
                {
                    for (var i = 0; i < targets.Length; i++)
                    {
                        if (targets[i] == at)
                        {
                            targets[i] = first;
                        }
                    }
                }
            }
            foreach (var handler in body.ExceptionHandlers)
            {
                if (handler.TryStart == at)
                {
                    handler.TryStart = first;
                }
                if (handler.TryEnd == at)
                {
                    handler.TryEnd = first;
                }
                if (handler.HandlerStart == at)
                {
                    handler.HandlerStart = first;
                }
                if (handler.HandlerEnd == at)
                {
                    handler.HandlerEnd = first;
                }
                if (handler.FilterStart == at)
                {
                    handler.FilterStart = first;
                }
            }
            return first;
        }

        static bool IsBackwardBranch(Instruction instruction, Dictionary<Instruction, int> offsets, int at)
        {
            var target = instruction.Operand as Instruction;
            int to;
            if (target != null && offsets.TryGetValue(target, out to) && IsBranch(instruction.OpCode))
            {
                return to <= at;
            }
            var targets = instruction.Operand as Instruction[];
            return targets != null && targets.Any(t => offsets.TryGetValue(t, out to) && to <= at);
        }

        static bool IsBranch(OpCode op) => op.FlowControl == FlowControl.Branch || op.FlowControl == FlowControl.Cond_Branch;

        /// <summary>Short branches as long ones: inserted code may put a target out of a short branch's reach.</summary>
        static void LongBranches(MethodBody body)
        {
            foreach (var instruction in body.Instructions)
            {
                OpCode wide;
                if (Long.TryGetValue(instruction.OpCode.Code, out wide))
                {
                    instruction.OpCode = wide;
                }
            }
        }

        static readonly Dictionary<Code, OpCode> Long = new Dictionary<Code, OpCode>
        {
            [Code.Br_S] = OpCodes.Br,
            [Code.Brfalse_S] = OpCodes.Brfalse,
            [Code.Brtrue_S] = OpCodes.Brtrue,
            [Code.Beq_S] = OpCodes.Beq,
            [Code.Bge_S] = OpCodes.Bge,
            [Code.Bgt_S] = OpCodes.Bgt,
            [Code.Ble_S] = OpCodes.Ble,
            [Code.Blt_S] = OpCodes.Blt,
            [Code.Bne_Un_S] = OpCodes.Bne_Un,
            [Code.Bge_Un_S] = OpCodes.Bge_Un,
            [Code.Bgt_Un_S] = OpCodes.Bgt_Un,
            [Code.Ble_Un_S] = OpCodes.Ble_Un,
            [Code.Blt_Un_S] = OpCodes.Blt_Un,
            [Code.Leave_S] = OpCodes.Leave,
        };

        /// <summary>The bytes one element of an array of <paramref name="element"/> takes (a reference: 8).</summary>
        static int ElementSize(TypeReference element)
        {
            switch (element.MetadataType)
            {
                case MetadataType.Boolean:
                case MetadataType.Byte:
                case MetadataType.SByte:
                    return 1;
                case MetadataType.Char:
                case MetadataType.Int16:
                case MetadataType.UInt16:
                    return 2;
                case MetadataType.Int32:
                case MetadataType.UInt32:
                case MetadataType.Single:
                    return 4;
                case MetadataType.ValueType:
                    return 16;
                default:
                    return 8;
            }
        }
    }
}
