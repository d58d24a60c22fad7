//! Resources read from the code object itself, never from what we asked LLVM for.
//!
//! AMD: the HSACO's `NT_AMDGPU_METADATA` note (type 32, owner `AMDGPU`) is a MessagePack map whose
//! `amdhsa.kernels` list has, per kernel, `.vgpr_count`, `.sgpr_count`, `.agpr_count`, the spill
//! counts, `.group_segment_fixed_size` (LDS), `.private_segment_fixed_size` (scratch) and
//! `.wavefront_size`. The ELF and the few MessagePack forms the note uses are parsed here by hand
//! (about a hundred lines) rather than pulling in an ELF and a MessagePack crate.
//!
//! NVIDIA: `ptxas -v --gpu-name sm_XX` prints registers, shared memory, stack and spills; without a
//! ptxas the registers are `None` and the source says "not measured (no ptxas)".

use kiln_ir::package::Resources;
use std::path::Path;
use std::process::Command;

/// A MessagePack value (the subset the AMDGPU note uses).
#[derive(Clone, Debug, PartialEq)]
enum Msg {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bin(Vec<u8>),
    Array(Vec<Msg>),
    Map(Vec<(Msg, Msg)>),
}

impl Msg {
    fn get(&self, key: &str) -> Option<&Msg> {
        match self {
            Msg::Map(kv) => {
                kv.iter().find(|(k, _)| matches!(k, Msg::Str(s) if s == key)).map(|(_, v)| v)
            }
            _ => None,
        }
    }
    fn as_u32(&self) -> Option<u32> {
        match self {
            Msg::Int(i) => u32::try_from(*i).ok(),
            _ => None,
        }
    }
    fn as_str(&self) -> Option<&str> {
        match self {
            Msg::Str(s) => Some(s),
            _ => None,
        }
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end =
            self.pos.checked_add(n).filter(|&e| e <= self.b.len()).ok_or("msgpack: truncated")?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn uint(&mut self, n: usize) -> Result<u64, String> {
        Ok(self.take(n)?.iter().fold(0u64, |a, &x| (a << 8) | x as u64))
    }
    fn value(&mut self, depth: u32) -> Result<Msg, String> {
        if depth > 32 {
            return Err("msgpack: nested too deep".into());
        }
        let t = self.take(1)?[0];
        let str_of = |r: &mut Reader, n: usize| -> Result<Msg, String> {
            Ok(Msg::Str(String::from_utf8_lossy(r.take(n)?).into_owned()))
        };
        Ok(match t {
            0x00..=0x7f => Msg::Int(t as i64),
            0x80..=0x8f => self.map((t & 0x0f) as usize, depth)?,
            0x90..=0x9f => self.array((t & 0x0f) as usize, depth)?,
            0xa0..=0xbf => str_of(self, (t & 0x1f) as usize)?,
            0xc0 => Msg::Nil,
            0xc2 => Msg::Bool(false),
            0xc3 => Msg::Bool(true),
            0xc4..=0xc6 => {
                let n = self.uint(1 << (t - 0xc4))? as usize;
                Msg::Bin(self.take(n)?.to_vec())
            }
            0xca => Msg::Float(f32::from_bits(self.uint(4)? as u32) as f64),
            0xcb => Msg::Float(f64::from_bits(self.uint(8)?)),
            0xcc..=0xcf => Msg::Int(self.uint(1 << (t - 0xcc))? as i64),
            0xd0 => Msg::Int(self.uint(1)? as u8 as i8 as i64),
            0xd1 => Msg::Int(self.uint(2)? as u16 as i16 as i64),
            0xd2 => Msg::Int(self.uint(4)? as u32 as i32 as i64),
            0xd3 => Msg::Int(self.uint(8)? as i64),
            0xd9..=0xdb => {
                let n = self.uint(1 << (t - 0xd9))? as usize;
                str_of(self, n)?
            }
            0xdc | 0xdd => {
                let n = self.uint(2 << (t - 0xdc))? as usize;
                self.array(n, depth)?
            }
            0xde | 0xdf => {
                let n = self.uint(2 << (t - 0xde))? as usize;
                self.map(n, depth)?
            }
            0xe0..=0xff => Msg::Int(t as i8 as i64),
            _ => return Err(format!("msgpack: unsupported type byte {t:#04x}")),
        })
    }
    fn array(&mut self, n: usize, depth: u32) -> Result<Msg, String> {
        (0..n).map(|_| self.value(depth + 1)).collect::<Result<_, _>>().map(Msg::Array)
    }
    fn map(&mut self, n: usize, depth: u32) -> Result<Msg, String> {
        (0..n)
            .map(|_| Ok((self.value(depth + 1)?, self.value(depth + 1)?)))
            .collect::<Result<_, String>>()
            .map(Msg::Map)
    }
}

/// The descriptors of the `NT_AMDGPU_METADATA` notes of an ELF64 little-endian file.
fn amdgpu_metadata_notes(elf: &[u8]) -> Result<Vec<&[u8]>, String> {
    let u16at = |o: usize| -> Result<u64, String> {
        elf.get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as u64)
            .ok_or("ELF: truncated".into())
    };
    let u32at = |o: usize| -> Result<u64, String> {
        elf.get(o..o + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()) as u64)
            .ok_or("ELF: truncated".into())
    };
    let u64at = |o: usize| -> Result<u64, String> {
        elf.get(o..o + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
            .ok_or("ELF: truncated".into())
    };
    if elf.get(0..4) != Some(b"\x7fELF") || elf.get(4) != Some(&2) || elf.get(5) != Some(&1) {
        return Err("not an ELF64 little-endian file".into());
    }
    let shoff = u64at(0x28)? as usize;
    let shentsize = u16at(0x3a)? as usize;
    let shnum = u16at(0x3c)? as usize;
    let mut notes = vec![];
    for i in 0..shnum {
        let sh = shoff + i * shentsize;
        if u32at(sh + 4)? != 7 {
            continue; // not SHT_NOTE
        }
        let (off, size) = (u64at(sh + 0x18)? as usize, u64at(sh + 0x20)? as usize);
        let sec = elf.get(off..off + size).ok_or("ELF: note section out of range")?;
        let mut p = 0;
        while p + 12 <= sec.len() {
            let rd = |o: usize| u32::from_le_bytes(sec[o..o + 4].try_into().unwrap()) as usize;
            let (namesz, descsz, ty) = (rd(p), rd(p + 4), rd(p + 8));
            let name_at = p + 12;
            let desc_at = name_at + namesz.div_ceil(4) * 4;
            let next = desc_at + descsz.div_ceil(4) * 4;
            let name = sec.get(name_at..name_at + namesz).ok_or("ELF: note out of range")?;
            let desc = sec.get(desc_at..desc_at + descsz).ok_or("ELF: note out of range")?;
            if ty == 32 && name.starts_with(b"AMDGPU") {
                notes.push(desc);
            }
            p = next;
        }
    }
    Ok(notes)
}

/// Reads the resources of kernel `symbol` (the kernel's name; the descriptor is `symbol.kd`) from
/// an HSACO's metadata note.
pub fn amdgpu_resources(hsaco: &[u8], symbol: &str) -> Result<Resources, String> {
    let notes = amdgpu_metadata_notes(hsaco)?;
    let desc = notes.first().ok_or("no NT_AMDGPU_METADATA note")?;
    let meta = Reader { b: desc, pos: 0 }.value(0)?;
    let Some(Msg::Array(kernels)) = meta.get("amdhsa.kernels") else {
        return Err("metadata has no amdhsa.kernels".into());
    };
    let k = kernels
        .iter()
        .find(|k| k.get(".name").and_then(Msg::as_str) == Some(symbol))
        .ok_or_else(|| format!("no kernel `{symbol}` in the metadata"))?;
    let field = |name: &str| k.get(name).and_then(Msg::as_u32);
    let need = |name: &str| field(name).ok_or_else(|| format!("kernel metadata lacks `{name}`"));
    Ok(Resources {
        vgprs: Some(need(".vgpr_count")?),
        sgprs: Some(need(".sgpr_count")?),
        agprs: Some(field(".agpr_count").unwrap_or(0)),
        lds_bytes: need(".group_segment_fixed_size")?,
        scratch_bytes: Some(need(".private_segment_fixed_size")?),
        vgpr_spills: Some(field(".vgpr_spill_count").unwrap_or(0)),
        sgpr_spills: Some(field(".sgpr_spill_count").unwrap_or(0)),
        wave_size: need(".wavefront_size")?,
        source: "amdhsa metadata".into(),
    })
}

/// Runs `ptxas -v` on a PTX file for `arch` and reads the numbers it prints for `symbol`.
/// Also the gate that the PTX assembles.
pub fn ptxas_resources(
    ptxas: &Path,
    ptx_file: &Path,
    arch: &str,
    wave: u32,
) -> Result<Resources, String> {
    let out = Command::new(ptxas)
        .args(["-v", "--gpu-name", arch, "-o", "/dev/null"])
        .arg(ptx_file)
        .output()
        .map_err(|e| format!("running {}: {e}", ptxas.display()))?;
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("ptxas failed ({}):\n{text}", out.status));
    }
    parse_ptxas(&text, wave)
}

/// The number in front of `unit` in `line` (`"16 registers"` -> 16).
fn number_before(line: &str, unit: &str) -> Option<u32> {
    let at = line.find(unit)?;
    line[..at].split_whitespace().last()?.trim_start_matches(',').parse().ok()
}

fn parse_ptxas(text: &str, wave: u32) -> Result<Resources, String> {
    let mut r = Resources { wave_size: wave, source: "ptxas -v".into(), ..Resources::default() };
    for line in text.lines() {
        if line.contains("Used") && line.contains("registers") {
            r.vgprs = number_before(line, "registers");
            r.lds_bytes = number_before(line, "bytes smem").unwrap_or(0);
        }
        if line.contains("stack frame") {
            r.scratch_bytes = number_before(line, "bytes stack frame");
            r.vgpr_spills = number_before(line, "bytes spill stores").map(|b| b.div_ceil(4));
            r.sgpr_spills = Some(0);
        }
    }
    if r.vgprs.is_none() {
        return Err(format!("no register count in the ptxas output:\n{text}"));
    }
    r.scratch_bytes.get_or_insert(0);
    r.vgpr_spills.get_or_insert(0);
    r.agprs = Some(0);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_lines() {
        let text = "ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
                    ptxas info    : Function properties for k\n    \
                    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n\
                    ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem, 380 bytes cmem[0]\n";
        let r = parse_ptxas(text, 32).unwrap();
        assert_eq!(r.vgprs, Some(40));
        assert_eq!(r.lds_bytes, 1024);
        assert_eq!(r.scratch_bytes, Some(8));
        assert_eq!(r.vgpr_spills, Some(1));
    }

    #[test]
    fn msgpack_forms() {
        // {"a": [1, -2, 300], "b": "xy"}
        let bytes =
            [0x82, 0xa1, b'a', 0x93, 0x01, 0xfe, 0xcd, 0x01, 0x2c, 0xa1, b'b', 0xa2, b'x', b'y'];
        let m = Reader { b: &bytes, pos: 0 }.value(0).unwrap();
        assert_eq!(m.get("a"), Some(&Msg::Array(vec![Msg::Int(1), Msg::Int(-2), Msg::Int(300)])));
        assert_eq!(m.get("b").and_then(Msg::as_str), Some("xy"));
    }
}
