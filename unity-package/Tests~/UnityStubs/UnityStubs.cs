// A hand-written stand-in for the few Unity members the Editor layer uses
// (UnityEngine, UnityEditor, the Test Framework's TestRunnerApi), so mono's
// compiler can check the Editor layer here. Signatures follow Unity's
// Scripting Reference; bodies do nothing. Never shipped, never run.
#pragma warning disable 0067, 0649, 1591

using System;
using System.Collections.Generic;
using System.Reflection;

namespace UnityEngine
{
    public enum RuntimePlatform { OSXEditor = 0, WindowsEditor = 7, LinuxEditor = 16 }
    public enum LogType { Error, Assert, Warning, Log, Exception }
    public enum TextureFormat { RGB24 = 3, RGBA32 = 4 }

    public static class Application
    {
        public delegate void LogCallback(string condition, string stackTrace, LogType type);
        public static string unityVersion => "";
        public static RuntimePlatform platform => RuntimePlatform.LinuxEditor;
        public static string dataPath => "";
        public static string productName => "";
        public static bool isBatchMode => false;
        public static event LogCallback logMessageReceived;
    }

    public static class Debug
    {
        public static void Log(object message) { }
        public static void LogWarning(object message) { }
        public static void LogError(object message) { }
    }

    public class Object
    {
        public string name { get; set; }
        public int GetInstanceID() => 0;
        public static void DestroyImmediate(Object obj) { }
    }

    public class Component : Object
    {
        public GameObject gameObject => null;
        public Transform transform => null;
    }

    public class Transform : Component
    {
        public int childCount => 0;
        public Transform GetChild(int index) => null;
    }

    public class Behaviour : Component { }
    public class Renderer : Component { }
    public class Collider : Component { }

    public sealed class GameObject : Object
    {
        public string tag { get; set; }
        public int layer { get; set; }
        public bool activeSelf => true;
        public Transform transform => null;
        public T[] GetComponents<T>() => new T[0];
    }

    public class ScriptableObject : Object
    {
        public static T CreateInstance<T>() where T : ScriptableObject => default(T);
    }

    public static class Resources
    {
        public static T[] FindObjectsOfTypeAll<T>() where T : Object => new T[0];
    }

    public struct Vector2 { public float x; public float y; }
    public struct Vector3 { public float x; public float y; public float z; }
    public struct Quaternion { public float x; public float y; public float z; public float w; }
    public struct Color { public float r; public float g; public float b; public float a; }

    public struct Rect
    {
        public float width { get; set; }
        public float height { get; set; }
        public Vector2 position { get; set; }
    }

    public class Texture2D : Object
    {
        public Texture2D(int width, int height, TextureFormat format, bool mipChain) { }
        public void SetPixels(Color[] colors) { }
        public void Apply() { }
    }

    public static class ImageConversion
    {
        public static byte[] EncodeToPNG(this Texture2D tex) => new byte[0];
    }

    public class GUIContent { public string text { get; set; } }
    public class GUIStyle { }

    public static class GUI { public static bool changed { get; set; } }

    public sealed class GUILayoutOption { }
    public class GUILayout { public static bool Button(string text, params GUILayoutOption[] options) => false; }
}

namespace UnityEngine.SceneManagement
{
    public struct Scene
    {
        public string name => "";
        public GameObject[] GetRootGameObjects() => new GameObject[0];
    }

    public static class SceneManager { public static Scene GetActiveScene() => default(Scene); }
}

namespace UnityEditor
{
    using UnityEngine;

    [AttributeUsage(AttributeTargets.Class)]
    public sealed class InitializeOnLoadAttribute : Attribute { }

    [AttributeUsage(AttributeTargets.Method, AllowMultiple = true)]
    public sealed class MenuItem : Attribute
    {
        public string menuItem;
        public bool validate;
        public int priority;
        public MenuItem(string itemName) : this(itemName, false) { }
        public MenuItem(string itemName, bool isValidateFunction) : this(itemName, isValidateFunction, 1000) { }
        public MenuItem(string itemName, bool isValidateFunction, int priority) { menuItem = itemName; validate = isValidateFunction; this.priority = priority; }
    }

    public static class SessionState
    {
        public static string GetString(string key, string defaultValue) => defaultValue;
        public static void SetString(string key, string value) { }
        public static int GetInt(string key, int defaultValue) => defaultValue;
        public static void SetInt(string key, int value) { }
        public static bool GetBool(string key, bool defaultValue) => defaultValue;
        public static void SetBool(string key, bool value) { }
    }

    public static class AssemblyReloadEvents
    {
        public delegate void AssemblyReloadCallback();
        public static event AssemblyReloadCallback beforeAssemblyReload;
    }

    public static class EditorApplication
    {
        public delegate void CallbackFunction();
        public static CallbackFunction update;
        public static CallbackFunction delayCall;
        public static event Action quitting;
        public static bool isPlaying { get; set; }
        public static bool isPaused { get; set; }
        public static bool isCompiling => false;
        public static bool ExecuteMenuItem(string menuItemPath) => false;
    }

    public static class AssetDatabase
    {
        public static void Refresh() { }
        public static string GUIDToAssetPath(string guid) => "";
        public static Type GetMainAssetTypeAtPath(string assetPath) => null;
    }

    public enum SerializedPropertyType { Generic = -1, Integer = 0, Boolean = 1, Float = 2, String = 3, Color = 4, ObjectReference = 5, Enum = 7, Vector2 = 8, Vector3 = 9, Quaternion = 17 }

    public class SerializedObject
    {
        public SerializedObject(Object obj) { }
        public SerializedProperty GetIterator() => null;
    }

    public class SerializedProperty
    {
        public bool NextVisible(bool enterChildren) => false;
        public string name => "";
        public SerializedPropertyType propertyType => SerializedPropertyType.Generic;
        public int intValue => 0;
        public bool boolValue => false;
        public float floatValue => 0;
        public string stringValue => "";
        public int enumValueIndex => 0;
        public string[] enumNames => new string[0];
        public Vector2 vector2Value => default(Vector2);
        public Vector3 vector3Value => default(Vector3);
        public Quaternion quaternionValue => default(Quaternion);
        public Color colorValue => default(Color);
    }

    public static class TypeCache
    {
        public static IList<MethodInfo> GetMethodsWithAttribute<T>() where T : Attribute => new List<MethodInfo>();
    }

    public class EditorWindow : ScriptableObject
    {
        public GUIContent titleContent { get; set; }
        public Rect position { get; set; }
        public void Focus() { }
        public void Repaint() { }
        public static T GetWindow<T>(string title) where T : EditorWindow => default(T);
    }

    public enum MessageType { None, Info, Warning, Error }

    public static class EditorStyles { public static GUIStyle boldLabel => null; }

    public static class EditorGUILayout
    {
        public static Vector2 BeginScrollView(Vector2 scrollPosition, params GUILayoutOption[] options) => scrollPosition;
        public static void EndScrollView() { }
        public static void LabelField(string label, params GUILayoutOption[] options) { }
        public static void LabelField(string label, string label2, params GUILayoutOption[] options) { }
        public static void LabelField(string label, GUIStyle style, params GUILayoutOption[] options) { }
        public static void Space() { }
        public static int IntField(string label, int value, params GUILayoutOption[] options) => value;
        public static int DelayedIntField(string label, int value, params GUILayoutOption[] options) => value;
        public static bool Toggle(string label, bool value, params GUILayoutOption[] options) => value;
        public static Enum EnumPopup(string label, Enum selected, params GUILayoutOption[] options) => selected;
        public static void HelpBox(string message, MessageType type) { }
    }
}

namespace UnityEditorInternal
{
    public static class InternalEditorUtility
    {
        public static UnityEngine.Color[] ReadScreenPixel(UnityEngine.Vector2 pixelPos, int sizex, int sizey) => new UnityEngine.Color[0];
    }
}

namespace UnityEditor.Compilation
{
    public enum CompilerMessageType { Error = 0, Warning = 1, Info = 2 }
    public enum RequestScriptCompilationOptions { None = 0, CleanBuildCache = 1 }

    public struct CompilerMessage
    {
        public string message;
        public string file;
        public int line;
        public int column;
        public CompilerMessageType type;
    }

    public static class CompilationPipeline
    {
        public static event Action<string, CompilerMessage[]> assemblyCompilationFinished;
        public static event Action<object> compilationStarted;
        public static event Action<object> compilationFinished;
        public static void RequestScriptCompilation() { }
        public static void RequestScriptCompilation(RequestScriptCompilationOptions options) { }
    }
}

namespace UnityEditor.Search
{
    [Flags]
    public enum SearchFlags { None = 0, Synchronous = 1 << 15, Packages = 1 << 8 }

    public class SearchProvider
    {
        public string id;
        public string name;
        public int priority;
        public bool active;
        public string filterId;
    }

    public class SearchContext : IDisposable { public void Dispose() { } }

    public class SearchItem
    {
        public string id;
        public int score;
        public SearchProvider provider;
        public string GetLabel(SearchContext context) => "";
        public string GetDescription(SearchContext context) => "";
    }

    public static class SearchService
    {
        public static IEnumerable<SearchProvider> Providers => new SearchProvider[0];
        public static SearchContext CreateContext(IEnumerable<string> providerIds, string searchText, SearchFlags flags) => new SearchContext();
        public static IEnumerable<SearchItem> Request(SearchContext context, SearchFlags options) => new SearchItem[0];
    }
}

namespace UnityEditor.TestTools.TestRunner.Api
{
    [Flags]
    public enum TestMode { EditMode = 1, PlayMode = 2 }
    public enum TestStatus { Skipped, Passed, Failed, Inconclusive }

    public class Filter
    {
        public TestMode testMode;
        public string[] testNames;
        public string[] groupNames;
        public string[] assemblyNames;
    }

    public class ExecutionSettings { public ExecutionSettings(params Filter[] filtersToExecute) { } }

    public interface ITestAdaptor
    {
        string Name { get; }
        string FullName { get; }
        bool IsSuite { get; }
    }

    public interface ITestResultAdaptor
    {
        ITestAdaptor Test { get; }
        TestStatus TestStatus { get; }
        double Duration { get; }
        string Message { get; }
        string StackTrace { get; }
        bool HasChildren { get; }
        IEnumerable<ITestResultAdaptor> Children { get; }
    }

    public interface ICallbacks
    {
        void RunStarted(ITestAdaptor testsToRun);
        void RunFinished(ITestResultAdaptor result);
        void TestStarted(ITestAdaptor test);
        void TestFinished(ITestResultAdaptor result);
    }

    public class TestRunnerApi : UnityEngine.ScriptableObject
    {
        public void RegisterCallbacks<T>(T testCallbacks, int priority = 0) where T : ICallbacks { }
        public void UnregisterCallbacks<T>(T testCallbacks) where T : ICallbacks { }
        public string Execute(ExecutionSettings executionSettings) => "";
    }
}
