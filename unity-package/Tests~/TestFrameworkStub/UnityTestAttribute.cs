// A stand-in for com.unity.test-framework's UnityTestAttribute, so the
// EditMode tests compile under mono here (Unity's Test Runner runs them).
// In the package (1.1.x, UnityEngine.TestRunner.dll) it derives from NUnit 3's
// CombiningStrategyAttribute, which the Debian NUnit 2.6 used here lacks: this
// declares only the name and the use the tests make of it ([UnityTest] on a
// method returning IEnumerator, each `yield return null` one Editor update).

using System;

namespace UnityEngine.TestTools
{
    [AttributeUsage(AttributeTargets.Method)]
    public class UnityTestAttribute : Attribute
    {
    }
}
