// execute-dynamic-code (§6) with the seeds' security levels: Disabled
// (refused by the security checker), Restricted (compiled code that
// references anything off RestrictedCode's allow-list is refused before it
// runs), FullAccess. The Editor compiles and runs the code; CodeDomRunner
// does that with the C# compiler the runtime provides.

using System;
using System.CodeDom.Compiler;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Text;
using System.Text.RegularExpressions;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    public class DynamicCodeParams
    {
        [Param("The C# code to execute")]
        public string Code = "";

        [Param("Runtime parameters for execution")]
        public JObject Parameters = new JObject();

        [Param("Only compile, do not execute")]
        public bool CompileOnly;
    }

    [McpTool("execute-dynamic-code", Description = "Execute C# code dynamically within Unity Editor. Implements security levels and automatic using statement processing with enhanced error messaging", Order = 110, Destructive = true, TimeoutSeconds = 60)]
    public sealed class ExecuteDynamicCodeTool : UnityTool<DynamicCodeParams>
    {
        protected override Task<JObject> Run(DynamicCodeParams p, ToolContext context)
        {
            if (p.Code.Trim().Length == 0)
            {
                throw new RpcError(RpcErrorKind.InvalidParams, "Parameter 'Code' must not be empty").With("parameter", "Code");
            }
            var level = context.Dispatcher.Security.Settings.DynamicCodeSecurityLevel;
            // Restricted is enforced by the runner on the compiled code (RestrictedCode).
            var run = context.Editor.RunCode(p.Code, p.Parameters, p.CompileOnly, level);
            var errors = new JArray();
            foreach (var e in run.Errors)
            {
                errors.Add(new JObject { ["Message"] = e.Message, ["Line"] = e.Line, ["Column"] = e.Column, ["ErrorCode"] = e.ErrorCode });
            }
            return Task.FromResult(new JObject
            {
                ["Success"] = run.Success,
                ["Result"] = run.Result,
                ["Logs"] = new JArray(run.Logs.Cast<object>().ToArray()),
                ["CompilationErrors"] = errors,
                ["ErrorMessage"] = run.ErrorMessage,
                ["SecurityLevel"] = level.ToString(),
                ["UpdatedCode"] = p.Code,
            });
        }

    }

    /// <summary>
    /// Compiles a snippet as the body of a method with the runtime's C#
    /// compiler (CodeDom) and runs it. The snippet sees <c>parameters</c>
    /// (a dictionary of the call's Parameters) and returns a value or nothing.
    /// </summary>
    public sealed class CodeDomRunner
    {
        /// <summary>Usings and helper types placed before the snippet's class.</summary>
        public string Preamble = "using System;\nusing System.Collections.Generic;\nusing System.Linq;\n";

        /// <summary>What the snippet logged, read from its assembly after it ran (null: nothing).</summary>
        public Func<Assembly, List<string>> Logs;

        /// <summary>Assemblies the snippet may use (paths or names).</summary>
        public List<string> References = new List<string> { "System.dll", "System.Core.dll" };

        public CodeRun Run(string code, JObject parameters, bool compileOnly, DynamicCodeSecurityLevel level)
        {
            var header = Preamble + "public static class McpDynamicCode\n{\n    public static object Run(System.Collections.Generic.Dictionary<string, object> parameters)\n    {\n#line 1\n";
            var source = header + code + "\n#line default\n        return null;\n    }\n}\n";
            CompilerResults compiled;
            byte[] image = null;
            // To a file, not into memory: the bytes are read (and audited)
            // before anything is loaded.
            var output = Path.Combine(Path.GetTempPath(), "McpDynamicCode-" + Guid.NewGuid().ToString("N") + ".dll");
            try
            {
                using (var provider = CodeDomProvider.CreateProvider("CSharp"))
                {
                    var options = new CompilerParameters { GenerateInMemory = false, OutputAssembly = output, GenerateExecutable = false, TreatWarningsAsErrors = false, WarningLevel = 0 };
                    options.ReferencedAssemblies.AddRange(References.ToArray());
                    compiled = provider.CompileAssemblyFromSource(options, source);
                }
                if (File.Exists(output))
                {
                    image = File.ReadAllBytes(output);
                }
            }
            catch (Exception e)
            {
                return new CodeRun { ErrorMessage = "The C# compiler could not be started, so this Editor cannot run dynamic code: " + e.Message };
            }
            finally
            {
                try
                {
                    File.Delete(output);
                }
                catch (Exception)
                {
                    // A temporary file left behind.
                }
            }
            var errors = compiled.Errors.Cast<CompilerError>().Where(e => !e.IsWarning).ToList();
            if (errors.Count > 0)
            {
                var failed = new CodeRun { ErrorMessage = "Compilation failed" };
                foreach (var e in errors)
                {
                    failed.Errors.Add(new CodeError { Message = e.ErrorText, Line = e.Line, Column = e.Column, ErrorCode = e.ErrorNumber });
                }
                return failed;
            }
            if (image == null)
            {
                return new CodeRun { ErrorMessage = "The C# compiler reported no errors but wrote no assembly" };
            }
            if (level == DynamicCodeSecurityLevel.Restricted)
            {
                var violation = RestrictedCode.Violation(image);
                if (violation != null)
                {
                    return new CodeRun { ErrorMessage = "Security violation: the code uses " + violation + ", which is not allowed at security level Restricted (the file system, processes, the network, reflection, threads and native code are not)" };
                }
            }
            if (compileOnly)
            {
                return new CodeRun { Success = true };
            }
            var values = new Dictionary<string, object>();
            foreach (var property in parameters.Properties())
            {
                values[property.Name] = property.Value is JValue ? ((JValue)property.Value).Value : property.Value.ToString(Newtonsoft.Json.Formatting.None);
            }
            var assembly = Assembly.Load(image);
            CodeRun run;
            try
            {
                var value = assembly.GetType("McpDynamicCode").GetMethod("Run").Invoke(null, new object[] { values });
                run = new CodeRun { Success = true, Result = value == null ? "" : Text(value) };
            }
            catch (TargetInvocationException e)
            {
                var inner = e.InnerException ?? e;
                run = new CodeRun { ErrorMessage = inner.GetType().Name + ": " + inner.Message };
            }
            if (Logs != null)
            {
                run.Logs = Logs(assembly);
            }
            return run;
        }

        /// <summary>A value as C#'s ToString shows it (true, not True; invariant numbers).</summary>
        static string Text(object value)
        {
            if (value is bool)
            {
                return (bool)value ? "true" : "false";
            }
            var formattable = value as IFormattable;
            return formattable != null ? formattable.ToString(null, System.Globalization.CultureInfo.InvariantCulture) : value.ToString();
        }
    }
}
