// Library calls that can run without end, given a bound: SnippetRewriter
// points a snippet's calls to them here instead, at every security level.
// A regular expression gets the call's remaining time as its match timeout
// (a catastrophic pattern like (a+)+$ ends with RegexMatchTimeoutException);
// Enumerable.Range and Repeat step the guard at each element, so a query
// over two billion of them is stopped like a loop of the snippet's own.

using System;
using System.Collections.Generic;
using System.Text.RegularExpressions;

namespace UnityMcp.Core
{
    public static class SnippetShims
    {
        /// <summary>The call's time left, as a match timeout (at least 1 ms).</summary>
        static TimeSpan Left(TimeSpan asked)
        {
            var left = SnippetGuard.TimeLeft;
            if (asked > TimeSpan.Zero && asked < left)
            {
                left = asked;
            }
            return left < TimeSpan.FromMilliseconds(1) ? TimeSpan.FromMilliseconds(1) : left;
        }

        public static Regex NewRegex(string pattern) => new Regex(pattern, RegexOptions.None, Left(TimeSpan.Zero));

        public static Regex NewRegex(string pattern, RegexOptions options) => new Regex(pattern, options, Left(TimeSpan.Zero));

        public static Regex NewRegex(string pattern, RegexOptions options, TimeSpan matchTimeout) => new Regex(pattern, options, Left(matchTimeout));

        public static bool IsMatch(string input, string pattern) => Regex.IsMatch(input, pattern, RegexOptions.None, Left(TimeSpan.Zero));

        public static bool IsMatch(string input, string pattern, RegexOptions options) => Regex.IsMatch(input, pattern, options, Left(TimeSpan.Zero));

        public static bool IsMatch(string input, string pattern, RegexOptions options, TimeSpan matchTimeout) => Regex.IsMatch(input, pattern, options, Left(matchTimeout));

        public static Match Match(string input, string pattern) => Regex.Match(input, pattern, RegexOptions.None, Left(TimeSpan.Zero));

        public static Match Match(string input, string pattern, RegexOptions options) => Regex.Match(input, pattern, options, Left(TimeSpan.Zero));

        public static Match Match(string input, string pattern, RegexOptions options, TimeSpan matchTimeout) => Regex.Match(input, pattern, options, Left(matchTimeout));

        public static MatchCollection Matches(string input, string pattern) => Regex.Matches(input, pattern, RegexOptions.None, Left(TimeSpan.Zero));

        public static MatchCollection Matches(string input, string pattern, RegexOptions options) => Regex.Matches(input, pattern, options, Left(TimeSpan.Zero));

        public static MatchCollection Matches(string input, string pattern, RegexOptions options, TimeSpan matchTimeout) => Regex.Matches(input, pattern, options, Left(matchTimeout));

        public static string Replace(string input, string pattern, string replacement) => Regex.Replace(input, pattern, replacement, RegexOptions.None, Left(TimeSpan.Zero));

        public static string Replace(string input, string pattern, string replacement, RegexOptions options) => Regex.Replace(input, pattern, replacement, options, Left(TimeSpan.Zero));

        public static string Replace(string input, string pattern, string replacement, RegexOptions options, TimeSpan matchTimeout) => Regex.Replace(input, pattern, replacement, options, Left(matchTimeout));

        public static string Replace(string input, string pattern, MatchEvaluator evaluator) => Regex.Replace(input, pattern, evaluator, RegexOptions.None, Left(TimeSpan.Zero));

        public static string Replace(string input, string pattern, MatchEvaluator evaluator, RegexOptions options) => Regex.Replace(input, pattern, evaluator, options, Left(TimeSpan.Zero));

        public static string Replace(string input, string pattern, MatchEvaluator evaluator, RegexOptions options, TimeSpan matchTimeout) => Regex.Replace(input, pattern, evaluator, options, Left(matchTimeout));

        public static string[] Split(string input, string pattern) => Regex.Split(input, pattern, RegexOptions.None, Left(TimeSpan.Zero));

        public static string[] Split(string input, string pattern, RegexOptions options) => Regex.Split(input, pattern, options, Left(TimeSpan.Zero));

        public static string[] Split(string input, string pattern, RegexOptions options, TimeSpan matchTimeout) => Regex.Split(input, pattern, options, Left(matchTimeout));

        /// <summary>Enumerable.Range, stepping the guard at each element.</summary>
        public static IEnumerable<int> Range(int start, int count)
        {
            if (count < 0 || (long)start + count - 1 > int.MaxValue)
            {
                throw new ArgumentOutOfRangeException("count");
            }
            return RangeOf(start, count);
        }

        static IEnumerable<int> RangeOf(int start, int count)
        {
            for (var i = 0; i < count; i++)
            {
                SnippetGuard.Step();
                yield return start + i;
            }
        }

        /// <summary>Enumerable.Repeat, stepping the guard at each element.</summary>
        public static IEnumerable<T> Repeat<T>(T element, int count)
        {
            if (count < 0)
            {
                throw new ArgumentOutOfRangeException("count");
            }
            return RepeatOf(element, count);
        }

        static IEnumerable<T> RepeatOf<T>(T element, int count)
        {
            for (var i = 0; i < count; i++)
            {
                SnippetGuard.Step();
                yield return element;
            }
        }

        /// <summary>
        /// Which shim stands for a library method, by its declaring type, name
        /// and parameter types (a constructor is named ".ctor"); null for none.
        /// </summary>
        public static string For(string declaringType, string name, string[] parameterTypes)
        {
            if (declaringType == "System.Text.RegularExpressions.Regex")
            {
                if (name == ".ctor" && parameterTypes.Length >= 1)
                {
                    return "NewRegex";
                }
                if ((name == "IsMatch" || name == "Match" || name == "Matches" || name == "Replace" || name == "Split") && parameterTypes.Length >= 2
                    && parameterTypes[0] == "System.String" && parameterTypes[1] == "System.String")
                {
                    return name;
                }
                return null;
            }
            if (declaringType == "System.Linq.Enumerable" && (name == "Range" || name == "Repeat"))
            {
                return name;
            }
            return null;
        }
    }
}
