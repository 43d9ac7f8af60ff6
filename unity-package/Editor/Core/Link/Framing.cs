// Framing of the editor link (docs/editor-link-protocol.md §2): header framing
// (Content-Length, LSP style) and newline framing, detected per connection,
// decoded incrementally from reads of any size. The same rules, and the same
// test vectors (fixtures/framing-vectors.json), as the Rust decoder.

using System;
using System.Globalization;
using System.Text;

namespace UnityMcp.Core
{
    /// <summary>How frames are delimited on one connection.</summary>
    public enum Framing
    {
        /// <summary>Content-Length: N, a blank line, N bytes.</summary>
        Header,
        /// <summary>One JSON value per line.</summary>
        Newline,
    }

    /// <summary>What a frame is.</summary>
    public enum FrameKind
    {
        /// <summary>A complete body.</summary>
        Body,
        /// <summary>A frame over the limit, skipped without being buffered.</summary>
        TooLarge,
    }

    /// <summary>One decoded frame.</summary>
    public struct Frame
    {
        public FrameKind Kind;
        /// <summary>The body (Body frames).</summary>
        public byte[] Body;
        /// <summary>The size: the declared length (header framing) or the bytes seen (newline).</summary>
        public long Size;

        public static Frame OfBody(byte[] body) => new Frame { Kind = FrameKind.Body, Body = body, Size = body.Length };

        public static Frame OfTooLarge(long size) => new Frame { Kind = FrameKind.TooLarge, Body = null, Size = size };
    }

    /// <summary>Why a header block is not one (sync with the peer is lost).</summary>
    public enum FramingErrorKind
    {
        MissingContentLength,
        ConflictingContentLength,
        InvalidContentLength,
        MalformedHeaderLine,
        BareLineFeed,
        HeaderTooLong,
    }

    /// <summary>A framing error: the connection must be answered and closed.</summary>
    public sealed class FramingException : Exception
    {
        public FramingErrorKind Kind { get; }

        public FramingException(FramingErrorKind kind, string message) : base(message)
        {
            Kind = kind;
        }
    }

    /// <summary>
    /// An incremental frame decoder. Feed it what the socket gives, then call
    /// <see cref="TryDecode"/> until it returns false ("need more bytes").
    /// </summary>
    public sealed class FrameDecoder
    {
        /// <summary>The longest header block accepted.</summary>
        public const int MaxHeaderBytes = 8 * 1024;

        enum State { Idle, Body, Discard, DiscardLine, Failed }

        readonly int limit;
        Framing? framing;
        State state = State.Idle;
        byte[] buffer = new byte[4096];
        int start;
        int count;
        // How far the current header block or line has been scanned.
        int scanned;
        int bodyLength;
        long remaining;

        /// <summary>A decoder for a known framing.</summary>
        public FrameDecoder(Framing framing, int limit)
        {
            this.framing = framing;
            this.limit = limit;
        }

        FrameDecoder(int limit)
        {
            this.limit = limit;
        }

        /// <summary>A decoder that detects the framing from the first byte that is not whitespace.</summary>
        public static FrameDecoder Detect(int limit) => new FrameDecoder(limit);

        /// <summary>The framing, once known.</summary>
        public Framing? Framing => framing;

        /// <summary>The largest frame accepted, in bytes.</summary>
        public int Limit => limit;

        /// <summary>Bytes held, waiting for the rest of their frame.</summary>
        public int Buffered => count;

        /// <summary>
        /// Adds bytes read from the connection. (The bytes of a frame being
        /// skipped are dropped by the next <see cref="TryDecode"/>, so no more
        /// than one read of them is ever held.)
        /// </summary>
        public void Feed(byte[] data, int offset, int length)
        {
            if (state == State.Failed || length == 0)
            {
                return;
            }
            Reserve(length);
            Buffer.BlockCopy(data, offset, buffer, start + count, length);
            count += length;
        }

        /// <summary>
        /// The next frame, if a whole one is buffered. Throws
        /// <see cref="FramingException"/> when the bytes break the framing;
        /// after that the decoder drops everything it is given.
        /// </summary>
        public bool TryDecode(out Frame frame)
        {
            frame = default(Frame);
            while (true)
            {
                switch (state)
                {
                    case State.Failed:
                        Consume(count);
                        return false;
                    case State.Discard:
                    {
                        var skip = (int)Math.Min(remaining, count);
                        Consume(skip);
                        remaining -= skip;
                        if (remaining > 0)
                        {
                            return false;
                        }
                        state = State.Idle;
                        continue;
                    }
                    case State.DiscardLine:
                    {
                        var newline = IndexOf((byte)'\n', 0);
                        if (newline < 0)
                        {
                            remaining += count;
                            Consume(count);
                            return false;
                        }
                        Consume(newline + 1);
                        state = State.Idle;
                        continue;
                    }
                    case State.Body:
                        if (count < bodyLength)
                        {
                            return false;
                        }
                        frame = Frame.OfBody(Take(bodyLength));
                        state = State.Idle;
                        return true;
                }
                // Idle.
                if (framing == null)
                {
                    var first = FirstNonWhitespace();
                    if (first < 0)
                    {
                        Consume(count);
                        return false;
                    }
                    framing = buffer[start + first] == (byte)'{' ? Core.Framing.Newline : Core.Framing.Header;
                }
                try
                {
                    var decoded = framing == Core.Framing.Header ? DecodeHeaderBlock(out frame) : DecodeLine(out frame);
                    if (decoded)
                    {
                        return true;
                    }
                    if (state == State.Idle)
                    {
                        return false;
                    }
                }
                catch (FramingException)
                {
                    state = State.Failed;
                    Consume(count);
                    throw;
                }
            }
        }

        /// <summary>
        /// The stream ended: true for a clean end between frames, false when
        /// it ended in the middle of one.
        /// </summary>
        public bool EndOfStream()
        {
            bool clean;
            switch (state)
            {
                case State.Idle:
                case State.Failed:
                    clean = FirstNonWhitespace() < 0;
                    break;
                default:
                    clean = false;
                    break;
            }
            Consume(count);
            state = State.Idle;
            scanned = 0;
            return clean;
        }

        bool DecodeHeaderBlock(out Frame frame)
        {
            frame = default(Frame);
            if (scanned == 0)
            {
                SkipWhitespace();
                if (count == 0)
                {
                    return false;
                }
            }
            var lineStart = LastLineStart(scanned);
            var pos = scanned;
            while (pos < count)
            {
                if (At(pos) == (byte)'\n')
                {
                    // The name first, as when the line arrives in pieces: the
                    // same bytes give the same error however they are read.
                    CheckPartialHeaderLine(lineStart, pos);
                    if (pos == 0 || At(pos - 1) != (byte)'\r')
                    {
                        throw new FramingException(FramingErrorKind.BareLineFeed, "a header line ends with a bare line feed");
                    }
                    if (pos - 1 == lineStart)
                    {
                        var length = ContentLength(lineStart);
                        Consume(pos + 1);
                        scanned = 0;
                        if (length > limit)
                        {
                            remaining = length;
                            state = State.Discard;
                            frame = Frame.OfTooLarge(length);
                            return true;
                        }
                        bodyLength = (int)length;
                        state = State.Body;
                        return false;
                    }
                    CheckHeaderLine(lineStart, pos - 1);
                    lineStart = pos + 1;
                }
                pos++;
            }
            CheckPartialHeaderLine(lineStart, count);
            if (count > MaxHeaderBytes)
            {
                throw new FramingException(FramingErrorKind.HeaderTooLong, "a header block longer than " + MaxHeaderBytes + " bytes");
            }
            scanned = count;
            return false;
        }

        bool DecodeLine(out Frame frame)
        {
            frame = default(Frame);
            while (true)
            {
                if (scanned == 0)
                {
                    SkipWhitespace();
                }
                var newline = IndexOf((byte)'\n', scanned);
                if (newline < 0)
                {
                    if (count > limit)
                    {
                        frame = Frame.OfTooLarge(count);
                        remaining = count;
                        Consume(count);
                        scanned = 0;
                        state = State.DiscardLine;
                        return true;
                    }
                    scanned = count;
                    return false;
                }
                scanned = 0;
                var end = newline;
                if (end > 0 && At(end - 1) == (byte)'\r')
                {
                    end--;
                }
                if (end > limit)
                {
                    Consume(newline + 1);
                    frame = Frame.OfTooLarge(end);
                    return true;
                }
                var blank = true;
                for (var i = 0; i < end && blank; i++)
                {
                    blank = IsWhitespace(At(i));
                }
                var body = Take(end);
                Consume(newline + 1 - end);
                if (blank)
                {
                    continue;
                }
                frame = Frame.OfBody(body);
                return true;
            }
        }

        long ContentLength(int blockEnd)
        {
            long? found = null;
            var lineStart = 0;
            while (lineStart < blockEnd)
            {
                var lineEnd = IndexOf((byte)'\n', lineStart);
                if (lineEnd < 0 || lineEnd > blockEnd)
                {
                    lineEnd = blockEnd;
                }
                var contentEnd = lineEnd > lineStart && At(lineEnd - 1) == (byte)'\r' ? lineEnd - 1 : lineEnd;
                var line = Encoding.ASCII.GetString(buffer, start + lineStart, contentEnd - lineStart);
                lineStart = lineEnd + 1;
                if (line.Length == 0)
                {
                    continue;
                }
                var colon = line.IndexOf(':');
                var name = (colon < 0 ? line : line.Substring(0, colon)).Trim(' ', '\t');
                if (!string.Equals(name, "content-length", StringComparison.OrdinalIgnoreCase))
                {
                    continue;
                }
                var raw = colon < 0 ? "" : line.Substring(colon + 1).Trim(' ', '\t');
                long value;
                if (raw.Length == 0 || !AllDigits(raw) || !long.TryParse(raw, NumberStyles.None, CultureInfo.InvariantCulture, out value))
                {
                    throw new FramingException(FramingErrorKind.InvalidContentLength, "Content-Length is not a length: \"" + raw + "\"");
                }
                if (found.HasValue && found.Value != value)
                {
                    throw new FramingException(FramingErrorKind.ConflictingContentLength, "two different Content-Length values: " + found.Value + " and " + value);
                }
                found = value;
            }
            if (!found.HasValue)
            {
                throw new FramingException(FramingErrorKind.MissingContentLength, "a header block without Content-Length");
            }
            return found.Value;
        }

        void CheckHeaderLine(int from, int to)
        {
            var colon = -1;
            for (var i = from; i < to; i++)
            {
                if (At(i) == (byte)':')
                {
                    colon = i;
                    break;
                }
            }
            var ok = colon >= 0;
            if (ok)
            {
                var nameStart = from;
                var nameEnd = colon;
                while (nameStart < nameEnd && IsBlank(At(nameStart))) nameStart++;
                while (nameEnd > nameStart && IsBlank(At(nameEnd - 1))) nameEnd--;
                ok = nameEnd > nameStart;
                for (var i = nameStart; i < nameEnd && ok; i++)
                {
                    ok = IsTokenChar(At(i));
                }
                for (var i = from; i < to && ok; i++)
                {
                    ok = At(i) != (byte)'\r';
                }
            }
            if (!ok)
            {
                throw new FramingException(FramingErrorKind.MalformedHeaderLine, "not a header line: \"" + Text(from, to) + "\"");
            }
        }

        // The part of a header line received so far: its name must be a token.
        void CheckPartialHeaderLine(int from, int to)
        {
            var end = to;
            for (var i = from; i < to; i++)
            {
                if (At(i) == (byte)':')
                {
                    end = i;
                    break;
                }
            }
            if (end == to && end > from && At(end - 1) == (byte)'\r')
            {
                end--;
            }
            for (var i = from; i < end; i++)
            {
                var b = At(i);
                if (!IsTokenChar(b) && !IsBlank(b))
                {
                    throw new FramingException(FramingErrorKind.MalformedHeaderLine, "not a header line: \"" + Text(from, to) + "\"");
                }
            }
        }

        static bool AllDigits(string s)
        {
            foreach (var c in s)
            {
                if (c < '0' || c > '9')
                {
                    return false;
                }
            }
            return true;
        }

        // RFC 9110 token characters, which header names are made of.
        static bool IsTokenChar(byte b) =>
            (b >= (byte)'a' && b <= (byte)'z') || (b >= (byte)'A' && b <= (byte)'Z') || (b >= (byte)'0' && b <= (byte)'9')
            || "!#$%&'*+-.^_`|~".IndexOf((char)b) >= 0;

        static bool IsBlank(byte b) => b == (byte)' ' || b == (byte)'\t';

        static bool IsWhitespace(byte b) => b == (byte)' ' || b == (byte)'\t' || b == (byte)'\r' || b == (byte)'\n' || b == 0x0c;

        byte At(int i) => buffer[start + i];

        string Text(int from, int to) => Encoding.UTF8.GetString(buffer, start + from, to - from);

        int IndexOf(byte value, int from)
        {
            if (from >= count)
            {
                return -1;
            }
            var found = Array.IndexOf(buffer, value, start + from, count - from);
            return found < 0 ? -1 : found - start;
        }

        int LastLineStart(int pos)
        {
            for (var i = pos - 1; i >= 0; i--)
            {
                if (At(i) == (byte)'\n')
                {
                    return i + 1;
                }
            }
            return 0;
        }

        int FirstNonWhitespace()
        {
            for (var i = 0; i < count; i++)
            {
                if (!IsWhitespace(At(i)))
                {
                    return i;
                }
            }
            return -1;
        }

        void SkipWhitespace()
        {
            var first = FirstNonWhitespace();
            Consume(first < 0 ? count : first);
        }

        byte[] Take(int length)
        {
            var taken = new byte[length];
            Buffer.BlockCopy(buffer, start, taken, 0, length);
            Consume(length);
            return taken;
        }

        void Consume(int length)
        {
            start += length;
            count -= length;
            if (count == 0)
            {
                start = 0;
            }
        }

        void Reserve(int more)
        {
            if (start + count + more <= buffer.Length)
            {
                return;
            }
            if (count + more <= buffer.Length)
            {
                Buffer.BlockCopy(buffer, start, buffer, 0, count);
                start = 0;
                return;
            }
            var grown = new byte[Math.Max(buffer.Length * 2, count + more)];
            Buffer.BlockCopy(buffer, start, grown, 0, count);
            buffer = grown;
            start = 0;
        }
    }

    /// <summary>Writes frames.</summary>
    public static class FrameEncoder
    {
        /// <summary>
        /// The bytes of one frame holding <paramref name="body"/> (compact
        /// JSON). Newline framing refuses a body with a raw newline.
        /// </summary>
        public static byte[] Encode(Framing framing, byte[] body)
        {
            if (framing == Framing.Newline)
            {
                if (Array.IndexOf(body, (byte)'\n') >= 0)
                {
                    throw new ArgumentException("a newline-framed body cannot hold a raw newline");
                }
                var line = new byte[body.Length + 1];
                Buffer.BlockCopy(body, 0, line, 0, body.Length);
                line[body.Length] = (byte)'\n';
                return line;
            }
            var header = Encoding.ASCII.GetBytes("Content-Length: " + body.Length.ToString(CultureInfo.InvariantCulture) + "\r\n\r\n");
            var frame = new byte[header.Length + body.Length];
            Buffer.BlockCopy(header, 0, frame, 0, header.Length);
            Buffer.BlockCopy(body, 0, frame, header.Length, body.Length);
            return frame;
        }
    }
}
