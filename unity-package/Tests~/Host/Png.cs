// The headless host's screenshots: the same simple picture of the scene
// fake-unity draws (sky, ground, a block per active root object), encoded
// as an RGB PNG.

using System;
using System.Collections.Generic;
using System.IO;
using System.IO.Compression;
using System.Linq;
using System.Text;
using UnityMcp.Core;

namespace UnityMcp.Host
{
    public static class Png
    {
        public static byte[] Picture(int width, int height, string window, List<SceneObject> roots)
        {
            var pixels = new byte[width * height * 3];
            uint tint = 0;
            foreach (var b in Encoding.UTF8.GetBytes(window))
            {
                tint = unchecked(tint * 31 + b);
            }
            var horizon = height * 2 / 3;
            for (var y = 0; y < height; y++)
            {
                for (var x = 0; x < width; x++)
                {
                    var i = (y * width + x) * 3;
                    if (y < horizon)
                    {
                        var t = y * 255 / Math.Max(1, horizon);
                        pixels[i] = (byte)Math.Min(255, 90 + t / 3);
                        pixels[i + 1] = (byte)Math.Min(255, 150 + t / 4);
                        pixels[i + 2] = 230;
                    }
                    else
                    {
                        var checker = ((x / 16 + y / 16) % 2) * 20;
                        pixels[i] = (byte)(60 + checker);
                        pixels[i + 1] = (byte)(110 + checker);
                        pixels[i + 2] = (byte)(60 + tint % 40);
                    }
                }
            }
            var active = roots.Where(g => g.Active).ToList();
            for (var n = 0; n < active.Count; n++)
            {
                var id = (ulong)Math.Abs(active[n].InstanceId);
                var blockWidth = Math.Max(1, width / (active.Count * 2 + 1));
                var x0 = blockWidth * (2 * n + 1);
                var sixth = Math.Max(1, height / 6);
                var blockHeight = sixth + (int)(id % (ulong)sixth);
                var y0 = Math.Max(0, horizon - blockHeight);
                for (var y = y0; y < horizon; y++)
                {
                    for (var x = x0; x < Math.Min(x0 + blockWidth, width); x++)
                    {
                        var i = (y * width + x) * 3;
                        pixels[i] = (byte)(id % 200 + 40);
                        pixels[i + 1] = 70;
                        pixels[i + 2] = (byte)(tint % 200 + 40);
                    }
                }
            }
            return Encode(width, height, pixels);
        }

        /// <summary>An 8-bit RGB PNG of <paramref name="rgb"/> (rows top to bottom).</summary>
        public static byte[] Encode(int width, int height, byte[] rgb)
        {
            var raw = new MemoryStream();
            for (var y = 0; y < height; y++)
            {
                raw.WriteByte(0); // filter: none
                raw.Write(rgb, y * width * 3, width * 3);
            }
            var rawBytes = raw.ToArray();
            var zlib = new MemoryStream();
            zlib.WriteByte(0x78);
            zlib.WriteByte(0x9C);
            using (var deflate = new DeflateStream(zlib, CompressionMode.Compress, true))
            {
                deflate.Write(rawBytes, 0, rawBytes.Length);
            }
            WriteBigEndian(zlib, Adler32(rawBytes));
            var png = new MemoryStream();
            png.Write(new byte[] { 137, 80, 78, 71, 13, 10, 26, 10 }, 0, 8);
            var header = new MemoryStream();
            WriteBigEndian(header, (uint)width);
            WriteBigEndian(header, (uint)height);
            header.Write(new byte[] { 8, 2, 0, 0, 0 }, 0, 5);
            Chunk(png, "IHDR", header.ToArray());
            Chunk(png, "IDAT", zlib.ToArray());
            Chunk(png, "IEND", new byte[0]);
            return png.ToArray();
        }

        static void Chunk(Stream png, string type, byte[] data)
        {
            WriteBigEndian(png, (uint)data.Length);
            var typed = Encoding.ASCII.GetBytes(type).Concat(data).ToArray();
            png.Write(typed, 0, typed.Length);
            WriteBigEndian(png, Crc32(typed));
        }

        static void WriteBigEndian(Stream stream, uint value)
        {
            stream.WriteByte((byte)(value >> 24));
            stream.WriteByte((byte)(value >> 16));
            stream.WriteByte((byte)(value >> 8));
            stream.WriteByte((byte)value);
        }

        static uint Adler32(byte[] data)
        {
            uint a = 1, b = 0;
            foreach (var d in data)
            {
                a = (a + d) % 65521;
                b = (b + a) % 65521;
            }
            return (b << 16) | a;
        }

        static uint Crc32(byte[] data)
        {
            var crc = 0xFFFFFFFFu;
            foreach (var d in data)
            {
                crc ^= d;
                for (var k = 0; k < 8; k++)
                {
                    crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
                }
            }
            return ~crc;
        }
    }
}
