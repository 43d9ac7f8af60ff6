// The C# decoder against the framing vectors the Rust decoder is tested with
// (fixtures/framing-vectors.json), each decoded whole, split in two at every
// position, and one byte at a time; and the encoder.

using System;
using System.Collections.Generic;
using System.IO;
using System.Text;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using UnityMcp.Core;

namespace UnityMcp.Core.Tests
{
    [TestFixture]
    public class FramingTests
    {
        /// <summary>The repository's fixtures folder (UNITY_MCP_FIXTURES, or found above this assembly).</summary>
        public static string FixturesDir()
        {
            var fromEnv = Environment.GetEnvironmentVariable("UNITY_MCP_FIXTURES");
            if (!string.IsNullOrEmpty(fromEnv))
            {
                return fromEnv;
            }
            var dir = new DirectoryInfo(Path.GetDirectoryName(typeof(FramingTests).Assembly.Location));
            while (dir != null && !File.Exists(Path.Combine(dir.FullName, "fixtures/framing-vectors.json")))
            {
                dir = dir.Parent;
            }
            if (dir == null)
            {
                throw new InvalidOperationException("fixtures/framing-vectors.json not found; set UNITY_MCP_FIXTURES");
            }
            return Path.Combine(dir.FullName, "fixtures");
        }

        public static JToken ReadJson(string path)
        {
            using (var reader = new JsonTextReader(new StreamReader(path, Encoding.UTF8)))
            {
                reader.DateParseHandling = DateParseHandling.None;
                reader.MaxDepth = 64;
                return JToken.ReadFrom(reader);
            }
        }

        public static IEnumerable<TestCaseData> Vectors()
        {
            var file = ReadJson(Path.Combine(FixturesDir(), "framing-vectors.json"));
            foreach (var vector in (JArray)file["vectors"])
            {
                yield return new TestCaseData(vector).SetName("vector: " + (string)vector["name"]);
            }
        }

        static FrameDecoder DecoderFor(JToken vector)
        {
            var limit = vector["limit"] != null ? (int)vector["limit"] : 64;
            switch ((string)vector["framing"])
            {
                case "header":
                    return new FrameDecoder(Framing.Header, limit);
                case "newline":
                    return new FrameDecoder(Framing.Newline, limit);
                default:
                    return FrameDecoder.Detect(limit);
            }
        }

        static string Kind(FramingErrorKind kind)
        {
            var name = kind.ToString();
            return char.ToLowerInvariant(name[0]) + name.Substring(1);
        }

        /// <summary>The events, then "eof:clean" or "eof:unexpected" (none after a framing error).</summary>
        static List<string> Decode(JToken vector, IEnumerable<byte[]> chunks)
        {
            var newline = (string)vector["framing"] == "newline";
            var decoder = DecoderFor(vector);
            var events = new List<string>();
            foreach (var chunk in chunks)
            {
                decoder.Feed(chunk, 0, chunk.Length);
                try
                {
                    Frame frame;
                    while (decoder.TryDecode(out frame))
                    {
                        if (frame.Kind == FrameKind.Body)
                        {
                            events.Add("body:" + Encoding.UTF8.GetString(frame.Body));
                        }
                        else
                        {
                            events.Add("tooLarge:" + (newline ? "any" : frame.Size.ToString()));
                        }
                    }
                }
                catch (FramingException e)
                {
                    events.Add("framingError:" + Kind(e.Kind));
                    return events;
                }
            }
            events.Add(decoder.EndOfStream() ? "eof:clean" : "eof:unexpected");
            return events;
        }

        static List<string> Expected(JToken vector)
        {
            var newline = (string)vector["framing"] == "newline";
            var expected = new List<string>();
            foreach (JObject e in (JArray)vector["events"])
            {
                if (e["body"] != null)
                {
                    expected.Add("body:" + (string)e["body"]);
                }
                else if (e["tooLarge"] != null)
                {
                    expected.Add("tooLarge:" + (newline ? "any" : ((long)e["tooLarge"]).ToString()));
                }
                else
                {
                    expected.Add("framingError:" + (string)e["framingError"]);
                }
            }
            if (vector["eof"] != null)
            {
                expected.Add("eof:" + (string)vector["eof"]);
            }
            return expected;
        }

        [TestCaseSource("Vectors")]
        public void DecodesAsWrittenHoweverItIsCut(JToken vector)
        {
            var input = Encoding.UTF8.GetBytes((string)vector["input"]);
            var expected = Expected(vector);
            Assert.AreEqual(expected, Decode(vector, new[] { input }), "whole");
            var bytes = new List<byte[]>();
            foreach (var b in input)
            {
                bytes.Add(new[] { b });
            }
            Assert.AreEqual(expected, Decode(vector, bytes), "one byte at a time");
            for (var at = 0; at <= input.Length; at++)
            {
                var first = new byte[at];
                var second = new byte[input.Length - at];
                Array.Copy(input, 0, first, 0, at);
                Array.Copy(input, at, second, 0, second.Length);
                Assert.AreEqual(expected, Decode(vector, new[] { first, second }), "cut at " + at);
            }
        }

        [Test]
        public void TheVectorsAreThere()
        {
            var count = 0;
            foreach (var unused in Vectors())
            {
                count++;
            }
            Assert.GreaterOrEqual(count, 30);
        }

        [Test]
        public void EncodesExactlyAsTheProtocolSays()
        {
            var body = Encoding.UTF8.GetBytes("{\"m\":\"héllo ☃\"}");
            Assert.AreEqual("Content-Length: 18\r\n\r\n{\"m\":\"héllo ☃\"}", Encoding.UTF8.GetString(FrameEncoder.Encode(Framing.Header, body)));
            Assert.AreEqual("{\"m\":\"héllo ☃\"}\n", Encoding.UTF8.GetString(FrameEncoder.Encode(Framing.Newline, body)));
            Assert.Throws<ArgumentException>(() => FrameEncoder.Encode(Framing.Newline, Encoding.UTF8.GetBytes("{\n}")));
        }

        [Test]
        public void AnOverLimitFrameIsNotBuffered()
        {
            var decoder = new FrameDecoder(Framing.Header, 1024);
            var header = Encoding.ASCII.GetBytes("Content-Length: 10000000\r\n\r\n");
            decoder.Feed(header, 0, header.Length);
            Frame frame;
            Assert.IsTrue(decoder.TryDecode(out frame));
            Assert.AreEqual(FrameKind.TooLarge, frame.Kind);
            Assert.AreEqual(10000000, frame.Size);
            var chunk = new byte[65536];
            for (var sent = 0; sent < 10000000; sent += chunk.Length)
            {
                var n = Math.Min(chunk.Length, 10000000 - sent);
                decoder.Feed(chunk, 0, n);
                Assert.IsFalse(decoder.TryDecode(out frame));
                Assert.LessOrEqual(decoder.Buffered, 0, "skipped bytes are dropped as they arrive");
            }
            var next = FrameEncoder.Encode(Framing.Header, Encoding.UTF8.GetBytes("{}"));
            decoder.Feed(next, 0, next.Length);
            Assert.IsTrue(decoder.TryDecode(out frame));
            Assert.AreEqual("{}", Encoding.UTF8.GetString(frame.Body));
        }

        [Test]
        public void AFramingErrorDropsEverythingAfter()
        {
            var decoder = new FrameDecoder(Framing.Header, 1024);
            var bad = Encoding.ASCII.GetBytes("garbage line\r\n");
            decoder.Feed(bad, 0, bad.Length);
            Frame frame;
            Assert.Throws<FramingException>(() => decoder.TryDecode(out frame));
            var good = FrameEncoder.Encode(Framing.Header, Encoding.UTF8.GetBytes("{}"));
            decoder.Feed(good, 0, good.Length);
            Assert.IsFalse(decoder.TryDecode(out frame));
        }
    }
}
