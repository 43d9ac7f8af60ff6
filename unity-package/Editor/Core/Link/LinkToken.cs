// The editor link's token (extension `token`): a secret made once per Editor
// process, published only in the discovery file (readable by its user alone
// on Unix), and required as the top-level member "x-token" of every request.
// A program that cannot read the user's Library/MCPInstance.json cannot
// call the Editor's tools; a person may let such clients in anyway
// (SecuritySettings.AllowClientsWithoutToken).

using System;
using System.Security.Cryptography;
using System.Text;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    /// <summary>Makes and checks the editor link's token.</summary>
    public static class LinkToken
    {
        /// <summary>The request member that carries the token.</summary>
        public const string Member = "x-token";

        /// <summary>Random bytes in a token.</summary>
        public const int Bytes = 32;

        /// <summary>Characters in a token: 32 bytes, base64url without padding.</summary>
        public const int Length = 43;

        /// <summary>A new token: 32 bytes from the system's cryptographic generator, base64url without padding (43 characters).</summary>
        public static string New()
        {
            var bytes = new byte[Bytes];
            using (var random = RandomNumberGenerator.Create())
            {
                random.GetBytes(bytes);
            }
            return Convert.ToBase64String(bytes).TrimEnd('=').Replace('+', '-').Replace('/', '_');
        }

        /// <summary>Whether <paramref name="token"/> looks like one <see cref="New"/> makes.</summary>
        public static bool IsWellFormed(string token)
        {
            if (token == null || token.Length != Length)
            {
                return false;
            }
            foreach (var c in token)
            {
                if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
                {
                    return false;
                }
            }
            return true;
        }

        /// <summary>
        /// This Editor process's token: the one <paramref name="load"/> finds
        /// (kept across domain reloads, e.g. in SessionState), else a new one,
        /// handed to <paramref name="save"/>.
        /// </summary>
        public static string Kept(Func<string> load, Action<string> save)
        {
            var token = load();
            if (IsWellFormed(token))
            {
                return token;
            }
            token = New();
            save(token);
            return token;
        }

        /// <summary>
        /// Whether <paramref name="given"/> (a request's x-token, or null when
        /// absent) is the string <paramref name="expected"/>. Compared in
        /// constant time over the bytes: how long it takes says nothing of
        /// where a wrong token differs.
        /// </summary>
        public static bool Matches(string expected, JToken given)
        {
            var value = given as JValue;
            if (string.IsNullOrEmpty(expected) || value == null || value.Type != JTokenType.String)
            {
                return false;
            }
            var want = Encoding.UTF8.GetBytes(expected);
            var got = Encoding.UTF8.GetBytes((string)value.Value ?? "");
            var difference = want.Length ^ got.Length;
            for (var i = 0; i < want.Length; i++)
            {
                difference |= want[i] ^ (i < got.Length ? got[i] : 0);
            }
            return difference == 0;
        }
    }
}
