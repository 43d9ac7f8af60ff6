// execute-dynamic-code (§6) with the seeds' security levels: Disabled
// (refused by the security checker), Restricted (code that names the file
// system, processes, the network, reflection or native code is refused
// before it is compiled), FullAccess. The Editor compiles and runs the code;
// CodeDomRunner does that with the C# compiler the runtime provides.

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
        /// <summary>APIs refused at the Restricted level (file system, processes, network, reflection, native code).</summary>
        public static readonly string[] RestrictedApis =
        {
            "System.IO", "System.Diagnostics.Process", "System.Net", "System.Reflection", "System.Runtime.InteropServices",
            "File", "Directory", "FileInfo", "DirectoryInfo", "Process", "WebClient", "HttpClient", "Socket", "Assembly",
            "AppDomain", "Activator", "Marshal", "DllImport", "Environment.Exit", "EditorApplication.Exit", "Registry",
        };

        protected override Task<JObject> Run(DynamicCodeParams p, ToolContext context)
        {
            if (p.Code.Trim().Length == 0)
            {
                throw new RpcError(RpcErrorKind.InvalidParams, "Parameter 'Code' must not be empty").With("parameter", "Code");
            }
            var level = context.Dispatcher.Security.Settings.DynamicCodeSecurityLevel;
            CodeRun run;
            var refused = level == DynamicCodeSecurityLevel.Restricted ? RestrictedApiIn(p.Code) : null;
            if (refused != null)
            {
                run = new CodeRun { ErrorMessage = "Security violation: '" + refused + "' is not allowed at security level Restricted" };
            }
            else
            {
                run = context.Editor.RunCode(p.Code, p.Parameters, p.CompileOnly, level);
            }
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

        static readonly Regex StringsAndComments = new Regex(@"@""(?:[^""]|"""")*""|""(?:[^""\\\n]|\\.)*""|'(?:[^'\\\n]|\\.)*'|//[^\n]*|/\*[\s\S]*?\*/");
        static readonly Regex QualifiedName = new Regex(@"[A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*");

        /// <summary>The first restricted API the code names (strings and comments aside), or null.</summary>
        public static string RestrictedApiIn(string code)
        {
            var bare = StringsAndComments.Replace(code, " ");
            foreach (Match name in QualifiedName.Matches(bare))
            {
                var parts = Regex.Replace(name.Value, @"\s", "").Split('.');
                foreach (var api in RestrictedApis)
                {
                    var apiParts = api.Split('.');
                    for (var i = 0; i + apiParts.Length <= parts.Length; i++)
                    {
                        if (parts.Skip(i).Take(apiParts.Length).SequenceEqual(apiParts))
                        {
                            return api;
                        }
                    }
                }
            }
            return null;
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

        public CodeRun Run(string code, JObject parameters, bool compileOnly)
        {
            var header = Preamble + "public static class McpDynamicCode\n{\n    public static object Run(System.Collections.Generic.Dictionary<string, object> parameters)\n    {\n#line 1\n";
            var source = header + code + "\n#line default\n        return null;\n    }\n}\n";
            CompilerResults compiled;
            try
            {
                using (var provider = CodeDomProvider.CreateProvider("CSharp"))
                {
                    var options = new CompilerParameters { GenerateInMemory = true, GenerateExecutable = false, TreatWarningsAsErrors = false, WarningLevel = 0 };
                    options.ReferencedAssemblies.AddRange(References.ToArray());
                    compiled = provider.CompileAssemblyFromSource(options, source);
                }
            }
            catch (Exception e)
            {
                return new CodeRun { ErrorMessage = "The C# compiler could not be started, so this Editor cannot run dynamic code: " + e.Message };
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
            if (compileOnly)
            {
                return new CodeRun { Success = true };
            }
            var values = new Dictionary<string, object>();
            foreach (var property in parameters.Properties())
            {
                values[property.Name] = property.Value is JValue ? ((JValue)property.Value).Value : property.Value.ToString(Newtonsoft.Json.Formatting.None);
            }
            var assembly = compiled.CompiledAssembly;
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
