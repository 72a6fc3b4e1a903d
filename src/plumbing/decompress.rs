//! Compressed inputs read as the text they hold: gzip (rotated logs and
//! exports) and zstd (the Collector's file exporter), told from their
//! first bytes, never from the file name.

use std::io::{self, Read};

const GZIP: [u8; 2] = [0x1F, 0x8B];
const ZSTD: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// `reader`, decompressed when it starts as a gzip stream (every member of
/// a concatenation) or a zstd frame (every frame); else as it is, its
/// first bytes given back.
pub(crate) fn transparent(mut reader: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
    let mut head = Vec::with_capacity(4);
    while head.len() < 4 {
        let mut byte = [0u8; 4];
        let want = 4 - head.len();
        match reader.read(&mut byte[..want]) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&byte[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let whole: Box<dyn Read + Send> = Box::new(io::Cursor::new(head.clone()).chain(reader));
    if head.starts_with(&GZIP) {
        return Ok(Box::new(flate2::read::MultiGzDecoder::new(
            io::BufReader::new(whole),
        )));
    }
    if head.starts_with(&ZSTD) {
        let decoder = ruzstd::decoding::StreamingDecoder::new(whole)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("zstd: {e}")))?;
        return Ok(Box::new(ZstdFrames(decoder)));
    }
    Ok(whole)
}

/// A zstd stream's frames one after another, as `zstd -dc` reads them.
struct ZstdFrames(
    ruzstd::decoding::StreamingDecoder<Box<dyn Read + Send>, ruzstd::decoding::FrameDecoder>,
);

impl Read for ZstdFrames {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let n = self.0.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // The frame ended: another may follow.
            let source = self.0.get_mut();
            let mut peek = [0u8; 1];
            let got = source.read(&mut peek)?;
            if got == 0 {
                return Ok(0);
            }
            let rest: Box<dyn Read + Send> = Box::new(
                io::Cursor::new(peek.to_vec())
                    .chain(std::mem::replace(source, Box::new(io::empty()))),
            );
            self.0 = ruzstd::decoding::StreamingDecoder::new(rest)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("zstd: {e}")))?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(bytes: Vec<u8>) -> String {
        let mut out = String::new();
        transparent(Box::new(io::Cursor::new(bytes)))
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn gzip_members_and_plain_text_read_as_their_text() {
        use flate2::write::GzEncoder;
        use std::io::Write;
        let member = |s: &str| {
            let mut e = GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(s.as_bytes()).unwrap();
            e.finish().unwrap()
        };
        let mut two = member("{\"a\":1}\n");
        two.extend(member("{\"b\":2}\n"));
        assert_eq!(read_all(two), "{\"a\":1}\n{\"b\":2}\n");
        assert_eq!(read_all(b"{}\n".to_vec()), "{}\n");
        assert_eq!(read_all(b"{".to_vec()), "{");
        assert_eq!(read_all(Vec::new()), "");
    }

    #[test]
    fn zstd_frames_read_as_their_text() {
        // Two frames, one after another, as zstd writes a concatenation.
        let frame = |s: &str| {
            ruzstd::encoding::compress_to_vec(
                s.as_bytes(),
                ruzstd::encoding::CompressionLevel::Fastest,
            )
        };
        let mut two = frame("hello\n");
        two.extend(frame("world\n"));
        assert_eq!(read_all(two), "hello\nworld\n");
    }
}
