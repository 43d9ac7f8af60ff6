// A hand-written stand-in for the few Unity members the Editor layer uses
// (UnityEngine, UnityEditor, the Test Framework's TestRunnerApi), so mono's
// compiler can check the Editor layer here. Never shipped, never run.
//
// Every declaration below is one Unity has, with Unity's signature (name,
// parameter types and names, params, optional defaults, return type,
// static/instance, property/field/method, event/delegate field, base class
// and interfaces, namespace). Only a subset of each type's members is
// declared; bodies are trivial (Unity's are often extern or attributed).
// Members Unity declares `internal` appear only where one is needed to
// avoid an implicit public constructor Unity lacks.
//
// Checked against:
// - UnityEngine, UnityEngine.SceneManagement, UnityEditor,
//   UnityEditorInternal, UnityEditor.Compilation and UnityEditor.Search
//   (the Editor's QuickSearch module, Modules/QuickSearch/Editor):
//   Unity-Technologies/UnityCsReference at tag 6000.0.78f1. The Search API
//   members used here were also compared with tag 2021.3.58f1 (same).
// - UnityEditor.TestTools.TestRunner.Api (package com.unity.test-framework,
//   not in UnityCsReference): checked against com.unity.test-framework
//   1.1.33 source (the package's minimum dependency), as published in the
//   needle-mirror/com.unity.test-framework mirror, tag 1.1.33; the members
//   declared here are the same in 1.4.5 (the fixture project's version).
#pragma warning disable 0067, 0649, 1591

using System;
using System.Collections;
using System.Collections.Generic;
using System.Reflection;

namespace UnityEngine
{
    // Runtime/Export/BaseClass.cs
    public enum RuntimePlatform { OSXEditor = 0, WindowsEditor = 7, LinuxEditor = 16 }
    public enum LogType { Error = 0, Assert = 1, Warning = 2, Log = 3, Exception = 4 }

    // Runtime/Export/Graphics/GraphicsEnums.cs
    public enum TextureFormat { RGB24 = 3, RGBA32 = 4 }

    // Runtime/Export/Application/Application.bindings.cs, Application.cs
    public class Application
    {
        public delegate void LogCallback(string condition, string stackTrace, LogType type);
        public static string unityVersion => "";
        public static RuntimePlatform platform => RuntimePlatform.LinuxEditor;
        public static string dataPath => "";
        public static string productName => "";
        public static bool isBatchMode => false;
        public static event LogCallback logMessageReceived;
    }

    // Runtime/Export/Debug/Debug.bindings.cs
    public class Debug
    {
        public static void Log(object message) { }
        public static void LogWarning(object message) { }
        public static void LogError(object message) { }
    }

    // Runtime/Export/Serialization/Serialization.cs
    public interface ISerializationCallbackReceiver
    {
        void OnBeforeSerialize();
        void OnAfterDeserialize();
    }

    // Runtime/Export/Scripting/UnityEngineObject.bindings.cs
    public class Object
    {
        public string name { get { return ""; } set { } }
        public int GetInstanceID() => 0;
        public static void DestroyImmediate(Object obj) { }
    }

    // Runtime/Export/Scripting/Component.bindings.cs
    public class Component : Object
    {
        public Transform transform => null;
        public GameObject gameObject => null;
    }

    // Runtime/Transform/ScriptBindings/Transform.bindings.cs
    public class Transform : Component, IEnumerable
    {
        protected Transform() { }
        public int childCount => 0;
        public Transform GetChild(int index) => null;
        public IEnumerator GetEnumerator() => new Transform[0].GetEnumerator();
    }

    public class Behaviour : Component { }   // Runtime/Export/Scripting/Behaviour.bindings.cs
    public class Renderer : Component { }    // Runtime/Export/Graphics/GraphicsRenderers.bindings.cs
    public class Collider : Component { }    // Modules/Physics/ScriptBindings/Collider.bindings.cs

    // Runtime/Export/Scripting/GameObject.bindings.cs
    public sealed class GameObject : Object
    {
        public T[] GetComponents<T>() => new T[0];
        public Transform transform => null;
        public int layer { get; set; }
        public bool activeSelf => true;
        public string tag { get { return ""; } set { } }
    }

    // Runtime/Export/Scripting/ScriptableObject.bindings.cs
    public class ScriptableObject : Object
    {
        public static T CreateInstance<T>() where T : ScriptableObject => default(T);
    }

    // Runtime/Export/Resources/Resources.bindings.cs
    public sealed class Resources
    {
        public static T[] FindObjectsOfTypeAll<T>() where T : Object => new T[0];
    }

    // Runtime/Export/Math/Vector2.cs, Vector3.cs, Quaternion.cs, Color.cs
    public struct Vector2 : IEquatable<Vector2>, IFormattable
    {
        public float x;
        public float y;
        public bool Equals(Vector2 other) => false;
        public string ToString(string format, IFormatProvider formatProvider) => "";
    }

    public struct Vector3 : IEquatable<Vector3>, IFormattable
    {
        public float x;
        public float y;
        public float z;
        public bool Equals(Vector3 other) => false;
        public string ToString(string format, IFormatProvider formatProvider) => "";
    }

    public struct Quaternion : IEquatable<Quaternion>, IFormattable
    {
        public float x;
        public float y;
        public float z;
        public float w;
        public bool Equals(Quaternion other) => false;
        public string ToString(string format, IFormatProvider formatProvider) => "";
    }

    public struct Color : IEquatable<Color>, IFormattable
    {
        public float r;
        public float g;
        public float b;
        public float a;
        public bool Equals(Color other) => false;
        public string ToString(string format, IFormatProvider formatProvider) => "";
    }

    // Runtime/Export/Geometry/Rect.cs
    public struct Rect : IEquatable<Rect>, IFormattable
    {
        public Vector2 position { get { return default(Vector2); } set { } }
        public float width { get { return 0; } set { } }
        public float height { get { return 0; } set { } }
        public bool Equals(Rect other) => false;
        public string ToString(string format, IFormatProvider formatProvider) => "";
    }

    // Runtime/Export/Graphics/Texture.bindings.cs, Texture.cs
    public class Texture : Object
    {
        protected Texture() { }
    }

    public sealed class Texture2D : Texture
    {
        public Texture2D(int width, int height, TextureFormat textureFormat, bool mipChain) { }
        public void SetPixels(Color[] colors) { }
        public void Apply() { }
    }

    // Modules/ImageConversion/ScriptBindings/ImageConversion.bindings.cs
    public static class ImageConversion
    {
        public static byte[] EncodeToPNG(this Texture2D tex) => new byte[0];
    }

    // Modules/IMGUI/GUIContent.cs, GUIStyle.cs, GUI.bindings.cs, GUILayoutOption.cs, GUILayout.cs
    public class GUIContent
    {
        public string text { get { return ""; } set { } }
    }

    public sealed class GUIStyle { }

    public class GUI
    {
        public static bool changed { get; set; }
        public static bool enabled { get; set; }
    }

    public sealed class GUILayoutOption
    {
        internal enum Type { fixedWidth, fixedHeight, minWidth, maxWidth, minHeight, maxHeight, stretchWidth, stretchHeight, alignStart, alignMiddle, alignEnd, alignJustify, equalSize, spacing }
        internal GUILayoutOption(Type type, object value) { }
    }

    public class GUILayout
    {
        public static bool Button(string text, params GUILayoutOption[] options) => false;
    }
}

namespace UnityEngine.SceneManagement
{
    // Runtime/Export/SceneManager/Scene.cs
    public struct Scene
    {
        public string name { get { return ""; } set { } }
        public GameObject[] GetRootGameObjects() => new GameObject[0];
    }

    // Runtime/Export/SceneManager/SceneManager.bindings.cs
    public class SceneManager
    {
        public static Scene GetActiveScene() => default(Scene);
    }
}

namespace UnityEditor
{
    using UnityEngine;

    // Editor/Mono/EditorAssemblies.cs
    [AttributeUsage(AttributeTargets.Class)]
    public class InitializeOnLoadAttribute : Attribute { }

    // Editor/Mono/MenuItem.cs
    [AttributeUsage(AttributeTargets.Method, AllowMultiple = true)]
    public sealed class MenuItem : Attribute
    {
        public MenuItem(string itemName) : this(itemName, false) { }
        public MenuItem(string itemName, bool isValidateFunction) : this(itemName, isValidateFunction, itemName.StartsWith("GameObject/Create Other") ? 10 : 1000) { }
        public MenuItem(string itemName, bool isValidateFunction, int priority) { menuItem = itemName; validate = isValidateFunction; this.priority = priority; }
        public string menuItem;
        public bool validate;
        public int priority;
    }

    // Editor/Mono/EditorGUIUtility.bindings.cs
    public class SessionState
    {
        public SessionState() { }
        public static void SetBool(string key, bool value) { }
        public static bool GetBool(string key, bool defaultValue) => defaultValue;
        public static void SetInt(string key, int value) { }
        public static int GetInt(string key, int defaultValue) => defaultValue;
        public static void SetString(string key, string value) { }
        public static string GetString(string key, string defaultValue) => defaultValue;
    }

    // Editor/Mono/AssemblyReloadEvents.cs
    public static class AssemblyReloadEvents
    {
        public delegate void AssemblyReloadCallback();
        public static event AssemblyReloadCallback beforeAssemblyReload;
    }

    // Editor/Mono/EditorApplication.cs, EditorApplication.bindings.cs
    public sealed class EditorApplication
    {
        public delegate void CallbackFunction();
        public static CallbackFunction update;
        public static event Action quitting;
        public static CallbackFunction delayCall;
        public static bool isPlaying { get; set; }
        public static bool isPaused { get; set; }
        public static bool isCompiling => false;
        public static bool ExecuteMenuItem(string menuItemPath) => false;
    }

    // Modules/AssetDatabase/Editor/ScriptBindings/AssetDatabase.bindings.cs
    public sealed class AssetDatabase
    {
        public static Type GetMainAssetTypeAtPath(string assetPath) => null;
        public static void Refresh() { }
        public static string GUIDToAssetPath(string guid) => "";
    }

    // Editor/Mono/SerializedProperty.bindings.cs, SerializedObject.bindings.cs
    public enum SerializedPropertyType { Generic = -1, Integer = 0, Boolean = 1, Float = 2, String = 3, Color = 4, ObjectReference = 5, Enum = 7, Vector2 = 8, Vector3 = 9, Quaternion = 17 }

    public class SerializedObject : IDisposable
    {
        public SerializedObject(Object obj) { }
        public void Dispose() { }
        public SerializedProperty GetIterator() => null;
    }

    public class SerializedProperty : IDisposable
    {
        internal SerializedProperty() { }
        public void Dispose() { }
        public bool NextVisible(bool enterChildren) => false;
        public string name => "";
        public SerializedPropertyType propertyType => SerializedPropertyType.Generic;
        public int intValue { get { return 0; } set { } }
        public bool boolValue { get { return false; } set { } }
        public float floatValue { get { return 0; } set { } }
        public string stringValue { get { return ""; } set { } }
        public Color colorValue { get { return default(Color); } set { } }
        public int enumValueIndex { get { return 0; } set { } }
        public string[] enumNames => new string[0];
        public Vector2 vector2Value { get { return default(Vector2); } set { } }
        public Vector3 vector3Value { get { return default(Vector3); } set { } }
        public Quaternion quaternionValue { get { return default(Quaternion); } set { } }
    }

    // Editor/Mono/TypeCache.cs
    public static class TypeCache
    {
        public static MethodCollection GetMethodsWithAttribute<T>() where T : Attribute => new MethodCollection(new MethodInfo[0]);

        public struct MethodCollection : IList<MethodInfo>, IList
        {
            readonly MethodInfo[] listOfMethods;

            internal MethodCollection(MethodInfo[] methods) { listOfMethods = methods; }

            public int Count => listOfMethods.Length;
            public bool IsReadOnly => true;
            public bool IsFixedSize => true;
            public bool IsSynchronized => true;
            object ICollection.SyncRoot => null;
            public MethodInfo this[int index] { get { return listOfMethods[index]; } set { } }
            public bool Contains(MethodInfo item) => IndexOf(item) != -1;
            public bool Contains(object item) => IndexOf(item) != -1;
            public Enumerator GetEnumerator() => new Enumerator(ref this);
            public void CopyTo(MethodInfo[] array, int arrayIndex) { }
            public void CopyTo(Array array, int arrayIndex) { }
            public int IndexOf(MethodInfo item) => Array.IndexOf(listOfMethods, item);
            public int IndexOf(object item) => Array.IndexOf(listOfMethods, item);
            IEnumerator<MethodInfo> IEnumerable<MethodInfo>.GetEnumerator() => GetEnumerator();
            IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
            void ICollection<MethodInfo>.Add(MethodInfo item) { }
            void ICollection<MethodInfo>.Clear() { }
            bool ICollection<MethodInfo>.Remove(MethodInfo item) => false;
            void IList<MethodInfo>.Insert(int index, MethodInfo item) { }
            void IList<MethodInfo>.RemoveAt(int index) { }
            object IList.this[int index] { get { return this[index]; } set { } }
            int IList.Add(object value) => -1;
            void IList.Clear() { }
            void IList.Insert(int index, object value) { }
            void IList.Remove(object value) { }
            void IList.RemoveAt(int index) { }

            public struct Enumerator : IEnumerator<MethodInfo>
            {
                readonly MethodCollection m_Collection;
                int m_Index;

                internal Enumerator(ref MethodCollection collection)
                {
                    m_Collection = collection;
                    m_Index = -1;
                }

                public void Dispose() { }
                public bool MoveNext() => ++m_Index < m_Collection.Count;
                public MethodInfo Current => m_Collection[m_Index];
                void IEnumerator.Reset() => m_Index = -1;
                object IEnumerator.Current => Current;
            }
        }
    }

    // Editor/Mono/EditorWindow.cs
    public class EditorWindow : ScriptableObject
    {
        public void Focus() { }
        public static T GetWindow<T>(string title) where T : EditorWindow => default(T);
        public void Repaint() { }
        public GUIContent titleContent { get { return null; } set { } }
        public Rect position { get { return default(Rect); } set { } }
    }

    // Editor/Mono/EditorGUIUtility.bindings.cs
    public enum MessageType { None = 0, Info = 1, Warning = 2, Error = 3 }

    // Editor/Mono/GUI/EditorStyles.cs
    public sealed class EditorStyles
    {
        public static GUIStyle boldLabel => null;
    }

    // Editor/Mono/EditorGUILayout.cs
    public sealed class EditorGUILayout
    {
        public static void LabelField(string label, params GUILayoutOption[] options) { }
        public static void LabelField(string label, GUIStyle style, params GUILayoutOption[] options) { }
        public static void LabelField(string label, string label2, params GUILayoutOption[] options) { }
        public static bool Toggle(string label, bool value, params GUILayoutOption[] options) => value;
        public static int IntField(string label, int value, params GUILayoutOption[] options) => value;
        public static int DelayedIntField(string label, int value, params GUILayoutOption[] options) => value;
        public static Enum EnumPopup(string label, Enum selected, params GUILayoutOption[] options) => selected;
        public static void HelpBox(string message, MessageType type) { }
        public static void Space() { }
        public static Vector2 BeginScrollView(Vector2 scrollPosition, params GUILayoutOption[] options) => scrollPosition;
        public static void EndScrollView() { }
    }
}

namespace UnityEditorInternal
{
    using UnityEngine;

    // Editor/Mono/InternalEditorUtility.bindings.cs
    public class InternalEditorUtility
    {
        public static Color[] ReadScreenPixel(Vector2 pixelPos, int sizex, int sizey) => new Color[0];
    }
}

namespace UnityEditor.Compilation
{
    // Editor/Mono/Scripting/ScriptCompilation/CompilerMessage.cs
    public enum CompilerMessageType { Error = 0, Warning = 1, Info = 2 }

    public struct CompilerMessage
    {
        public string message;
        public string file;
        public int line;
        public int column;
        public CompilerMessageType type;
    }

    // Editor/Mono/Scripting/ScriptCompilation/CompilationPipeline.cs
    [Flags]
    public enum RequestScriptCompilationOptions { None, CleanBuildCache }

    public static class CompilationPipeline
    {
        public static event Action<object> compilationStarted;
        public static event Action<object> compilationFinished;
        public static event Action<string, CompilerMessage[]> assemblyCompilationFinished;
        public static void RequestScriptCompilation() { }
        public static void RequestScriptCompilation(RequestScriptCompilationOptions options) { }
    }
}

namespace UnityEditor.Search
{
    using UnityEngine;

    // Modules/QuickSearch/Editor/SearchFlags.cs
    [Flags]
    public enum SearchFlags { None = 0, Synchronous = 1 << 0, Sorted = 1 << 1, Packages = 1 << 8, Default = Sorted }

    // Modules/QuickSearch/Editor/SearchProvider.cs
    [Serializable]
    public class SearchProvider : ISerializationCallbackReceiver
    {
        public int priority;
        public bool active;
        public string filterId;
        public string id { get; private set; }
        public string name { get; private set; }
        public SearchProvider(string id) { this.id = id; }
        void ISerializationCallbackReceiver.OnBeforeSerialize() { }
        void ISerializationCallbackReceiver.OnAfterDeserialize() { }
    }

    // Modules/QuickSearch/Editor/SearchContext.cs
    [Serializable]
    public class SearchContext : IDisposable, ISerializationCallbackReceiver
    {
        internal SearchContext() { }
        public void Dispose() { }
        void ISerializationCallbackReceiver.OnBeforeSerialize() { }
        void ISerializationCallbackReceiver.OnAfterDeserialize() { }
    }

    // Modules/QuickSearch/Editor/SearchItem.cs
    public class SearchItem : IEquatable<SearchItem>, IComparable<SearchItem>, IComparable
    {
        public readonly string id;
        public int score;
        public SearchProvider provider;
        public SearchItem(string _id) { id = _id; }
        public string GetLabel(SearchContext context, bool stripHTML = false) => "";
        public string GetDescription(SearchContext context, bool stripHTML = false) => "";
        public int CompareTo(SearchItem other) => 0;
        public int CompareTo(object other) => 0;
        public bool Equals(SearchItem other) => false;
    }

    // Modules/QuickSearch/Editor/SearchList.cs (Unity also declares an
    // internal member, SortBy, which C# 7 cannot declare in an interface)
    public interface ISearchList : IList<SearchItem>, IDisposable
    {
        bool pending { get; }
        SearchContext context { get; }
        IEnumerable<SearchItem> Fetch();
        void AddItems(IEnumerable<SearchItem> items);
        void InsertRange(int index, IEnumerable<SearchItem> items);
        IEnumerable<SearchItem> GetRange(int skipCount, int count);
        IEnumerable<TResult> Select<TResult>(Func<SearchItem, TResult> selector);
    }

    // Modules/QuickSearch/Editor/SearchService.cs
    public static class SearchService
    {
        public static List<SearchProvider> Providers { get; private set; }
        public static SearchContext CreateContext(IEnumerable<string> providerIds, string searchText = "", SearchFlags flags = SearchFlags.Default) => null;
        public static ISearchList Request(SearchContext context, SearchFlags options = SearchFlags.None) => null;
    }
}

namespace UnityEditor.TestTools.TestRunner.Api
{
    // com.unity.test-framework 1.1.33, UnityEditor.TestRunner/Api/*.cs
    // (TestRunnerApi also implements the package's internal ITestRunnerApi).
    [Flags]
    public enum TestMode { EditMode = 1 << 0, PlayMode = 1 << 1 }

    public enum TestStatus { Inconclusive, Skipped, Passed, Failed }

    [Serializable]
    public class Filter
    {
        public TestMode testMode;
        public string[] testNames;
        public string[] groupNames;
        public string[] assemblyNames;
    }

    [Serializable]
    public class ExecutionSettings
    {
        public ExecutionSettings(params Filter[] filtersToExecute) { }
    }

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
        public string Execute(ExecutionSettings executionSettings) => "";
        public void RegisterCallbacks<T>(T testCallbacks, int priority = 0) where T : ICallbacks { }
        public void UnregisterCallbacks<T>(T testCallbacks) where T : ICallbacks { }
    }
}
