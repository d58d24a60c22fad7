//! The reference side of the lane maps: moving a whole matrix to a wave's fragments and back,
//! and the multiply that the interpreter runs for `mma` (integers exact, f16 products exact and
//! summed in f64 from C, rounded once).

use super::*;

impl Matrix {
    /// A `rows x cols` matrix of zero bits.
    pub fn zeros(elem: ScalarType, rows: u32, cols: u32) -> Matrix {
        Matrix { elem, rows, cols, bits: vec![0; (rows * cols) as usize] }
    }

    /// The bits at `(row, col)`. Panics outside the matrix.
    pub fn get(&self, row: u32, col: u32) -> u64 {
        assert!(
            row < self.rows && col < self.cols,
            "({row}, {col}) outside {} x {}",
            self.rows,
            self.cols
        );
        self.bits[(row * self.cols + col) as usize]
    }

    /// Sets the bits at `(row, col)`. Panics outside the matrix.
    pub fn set(&mut self, row: u32, col: u32, bits: u64) {
        assert!(
            row < self.rows && col < self.cols,
            "({row}, {col}) outside {} x {}",
            self.rows,
            self.cols
        );
        self.bits[(row * self.cols + col) as usize] = bits;
    }

    fn check(&self, kind: MmaKind, role: FragmentRole) -> Result<(), MatrixError> {
        let (rows, cols) = kind.shape.dims(role);
        let elem = kind.elem(role);
        if self.rows != rows
            || self.cols != cols
            || self.elem != elem
            || self.bits.len() != (rows * cols) as usize
        {
            return Err(MatrixError::MatrixMismatch {
                shape: kind.shape,
                role,
                rows,
                cols,
                elem,
                found_rows: self.rows,
                found_cols: self.cols,
                found_elem: self.elem,
                found_len: self.bits.len(),
            });
        }
        Ok(())
    }
}

fn width_mask(elem: ScalarType) -> u64 {
    match elem.bits() {
        64 => u64::MAX,
        n => (1u64 << n) - 1,
    }
}

/// Spreads a whole operand over the wave: `[lane * elements_per_lane + element]`, every copy filled
/// (gfx11 A/B: lanes 16-31 too). This is what a fragment load computes.
pub fn to_lanes(
    kind: MmaKind,
    role: FragmentRole,
    matrix: &Matrix,
) -> Result<Vec<u64>, MatrixError> {
    matrix.check(kind, role)?;
    let shape = kind.shape;
    let per_lane = shape.elements_per_lane(role);
    let mask = width_mask(matrix.elem);
    let mut lanes = vec![0; (shape.wave_size() * per_lane) as usize];
    for lane in 0..shape.wave_size() {
        for element in 0..per_lane {
            let (row, col) = shape.coord(role, lane, element)?;
            lanes[(lane * per_lane + element) as usize] = matrix.get(row, col) & mask;
        }
    }
    Ok(lanes)
}

/// Gathers a whole operand from the wave's fragments (`[lane * elements_per_lane + element]`),
/// reading each element at its owner; gfx11 A/B duplicates must equal their owner. This is what a
/// fragment store computes.
pub fn from_lanes(kind: MmaKind, role: FragmentRole, lanes: &[u64]) -> Result<Matrix, MatrixError> {
    let shape = kind.shape;
    let per_lane = shape.elements_per_lane(role);
    let expected = (shape.wave_size() * per_lane) as usize;
    if lanes.len() != expected {
        return Err(MatrixError::FragmentLength { shape, role, expected, found: lanes.len() });
    }
    let elem = kind.elem(role);
    let mask = width_mask(elem);
    let (rows, cols) = shape.dims(role);
    let mut matrix = Matrix::zeros(elem, rows, cols);
    let at = |p: LaneElement| lanes[(p.lane * per_lane + p.element) as usize] & mask;
    for row in 0..rows {
        for col in 0..cols {
            let home = shape.home(role, row, col)?;
            let value = at(home.owner);
            if let Some(twin) = home.duplicate {
                let twin_value = at(twin);
                if twin_value != value {
                    return Err(MatrixError::DuplicateMismatch {
                        shape,
                        role,
                        lane: home.owner.lane,
                        twin: twin.lane,
                        element: home.owner.element,
                        value,
                        twin_value,
                    });
                }
            }
            matrix.set(row, col, value);
        }
    }
    Ok(matrix)
}

fn int_value(elem: ScalarType, bits: u64) -> i64 {
    match elem {
        ScalarType::I8 => bits as u8 as i8 as i64,
        ScalarType::U8 => bits as u8 as i64,
        ScalarType::I32 => bits as u32 as i32 as i64,
        ScalarType::I1
        | ScalarType::I16
        | ScalarType::U16
        | ScalarType::U32
        | ScalarType::I64
        | ScalarType::U64
        | ScalarType::F16
        | ScalarType::BF16
        | ScalarType::F32
        | ScalarType::F64 => {
            unreachable!("MmaKind::new admits only i8 / u8 multiplicands and i32 accumulators")
        }
    }
}

/// The whole-matrix reference `D = A x B + C` (see the module doc for its arithmetic: integers
/// exact with i32 wrapping; f16 products exact, summed in f64 from C in ascending k, rounded once
/// to f32).
pub fn mma_reference(
    kind: MmaKind,
    a: &Matrix,
    b: &Matrix,
    c: &Matrix,
) -> Result<Matrix, MatrixError> {
    a.check(kind, FragmentRole::A)?;
    b.check(kind, FragmentRole::B)?;
    c.check(kind, FragmentRole::C)?;
    let d = match kind.shape.inputs() {
        MmaInputs::F16 => {
            let val = |x: u64| f16::from_bits(x as u16).to_f64();
            each_element(kind, a, b, c, val, val, |acc, ar, br| {
                let mut acc = f32::from_bits(acc as u32) as f64;
                for (x, y) in ar.iter().zip(br) {
                    acc += x * y;
                }
                (acc as f32).to_bits() as u64
            })
        }
        MmaInputs::Int8 => {
            let (va, vb) = (|x| int_value(kind.a, x), |x| int_value(kind.b, x));
            each_element(kind, a, b, c, va, vb, |acc, ar, br| {
                let sum: i64 = ar.iter().zip(br).map(|(x, y)| x * y).sum();
                let acc = int_value(ScalarType::I32, acc) as i32;
                acc.wrapping_add(sum as i32) as u32 as u64
            })
        }
    };
    Ok(d)
}

/// D with `D[i][j] = element(C[i][j], row i of A, column j of B)`, the operands' values
/// converted once each (A by rows, B by columns), not once a product: the interpreter runs
/// this for every MMA of every wave.
fn each_element<T>(
    kind: MmaKind,
    a: &Matrix,
    b: &Matrix,
    c: &Matrix,
    val_a: impl Fn(u64) -> T,
    val_b: impl Fn(u64) -> T,
    element: impl Fn(u64, &[T], &[T]) -> u64,
) -> Matrix {
    let (m, n, k) = kind.shape.mnk();
    let (val_a, val_b) = (&val_a, &val_b);
    let rows: Vec<T> = (0..m).flat_map(|i| (0..k).map(move |kk| val_a(a.get(i, kk)))).collect();
    let cols: Vec<T> = (0..n).flat_map(|j| (0..k).map(move |kk| val_b(b.get(kk, j)))).collect();
    let mut d = Matrix::zeros(kind.shape.accumulator(), m, n);
    for (i, ar) in (0..m).zip(rows.chunks(k as usize)) {
        for (j, bc) in (0..n).zip(cols.chunks(k as usize)) {
            d.set(i, j, element(c.get(i, j), ar, bc));
        }
    }
    d
}

/// The fragment-level model the interpreter calls: each argument is one operand over the wave,
/// `[lane * elements_per_lane + element]` bit patterns; the result is D in C's layout. Lanes go to
/// matrices through the maps ([`from_lanes`]), through [`mma_reference`], and back ([`to_lanes`]).
pub fn mma_fragments(
    kind: MmaKind,
    a: &[u64],
    b: &[u64],
    c: &[u64],
) -> Result<Vec<u64>, MatrixError> {
    let a = from_lanes(kind, FragmentRole::A, a)?;
    let b = from_lanes(kind, FragmentRole::B, b)?;
    let c = from_lanes(kind, FragmentRole::C, c)?;
    let d = mma_reference(kind, &a, &b, &c)?;
    to_lanes(kind, FragmentRole::C, &d)
}
