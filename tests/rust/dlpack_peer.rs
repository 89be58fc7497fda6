// SPDX-License-Identifier: Apache-2.0
//! A DLPack peer in Rust, written against the C ABI alone (no crates): it exports a
//! DLManagedTensorVersioned for dlpackpp to adopt, adopts and releases dlpackpp's exports, and
//! reports its struct layouts so the C++ side can check that both agree. Built by CTest with
//! `rustc --crate-type=staticlib` (no Cargo); it uses nothing newer than Rust 1.63 (Debian 12).
#![allow(non_camel_case_types)]

use std::mem::{align_of, size_of, MaybeUninit};
use std::os::raw::c_void;
use std::ptr::addr_of;
use std::sync::atomic::{AtomicUsize, Ordering};

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DLPackVersion {
    pub major: u32,
    pub minor: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DLDevice {
    pub device_type: i32,
    pub device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

#[repr(C)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

#[repr(C)]
pub struct DLManagedTensorVersioned {
    pub version: DLPackVersion,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    pub flags: u64,
    pub dl_tensor: DLTensor,
}

#[repr(C)]
pub struct DLManagedTensor {
    pub dl_tensor: DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

const DLPACK_MAJOR: u32 = 1;
const DLPACK_MINOR: u32 = 3;
const KDL_CPU: i32 = 1;
const KDL_FLOAT: u8 = 2;

// Everything one export owns, freed by its deleter: the struct, its arrays and the values.
struct Owned {
    managed: DLManagedTensorVersioned,
    shape: [i64; 2],
    strides: [i64; 2],
    values: Vec<f32>,
}

static RUST_DELETES: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn rust_deleter(tensor: *mut DLManagedTensorVersioned) {
    drop(Box::from_raw((*tensor).manager_ctx as *mut Owned));
    RUST_DELETES.fetch_add(1, Ordering::SeqCst);
}

/// A rows x cols float32 tensor holding 0, 1, 2, ... in row-major order, owned by Rust.
#[no_mangle]
pub extern "C" fn rust_export_matrix(rows: i64, cols: i64) -> *mut DLManagedTensorVersioned {
    if rows < 0 || cols < 0 {
        return std::ptr::null_mut();
    }
    let values: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let owned = Box::into_raw(Box::new(Owned {
        managed: DLManagedTensorVersioned {
            version: DLPackVersion { major: DLPACK_MAJOR, minor: DLPACK_MINOR },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(rust_deleter),
            flags: 0,
            dl_tensor: DLTensor {
                data: std::ptr::null_mut(),
                device: DLDevice { device_type: KDL_CPU, device_id: 0 },
                ndim: 2,
                dtype: DLDataType { code: KDL_FLOAT, bits: 32, lanes: 1 },
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
        },
        shape: [rows, cols],
        strides: [cols, 1],
        values,
    }));
    // The box never moves, so pointers into it stay valid until the deleter frees it.
    unsafe {
        (*owned).managed.manager_ctx = owned as *mut c_void;
        (*owned).managed.dl_tensor.data = (*owned).values.as_mut_ptr() as *mut c_void;
        (*owned).managed.dl_tensor.shape = (*owned).shape.as_mut_ptr();
        (*owned).managed.dl_tensor.strides = (*owned).strides.as_mut_ptr();
        &mut (*owned).managed
    }
}

/// How many tensors Rust's deleter has released.
#[no_mangle]
pub extern "C" fn rust_deletes() -> usize {
    RUST_DELETES.load(Ordering::SeqCst)
}

/// Takes ownership of a 2-D float32 tensor from C++, sums it through its strides (NULL means
/// compact), and releases it through its deleter exactly once. NaN when it is refused.
#[no_mangle]
pub unsafe extern "C" fn rust_consume_sum(tensor: *mut DLManagedTensorVersioned) -> f64 {
    if tensor.is_null() {
        return f64::NAN;
    }
    let mut sum = f64::NAN;
    let t = &(*tensor).dl_tensor;
    if (*tensor).version.major == DLPACK_MAJOR
        && t.ndim == 2
        && t.dtype.code == KDL_FLOAT
        && t.dtype.bits == 32
        && t.dtype.lanes == 1
        && !t.shape.is_null()
    {
        let shape = std::slice::from_raw_parts(t.shape, 2);
        let strides: [i64; 2] = if t.strides.is_null() {
            [shape[1], 1]
        } else {
            let s = std::slice::from_raw_parts(t.strides, 2);
            [s[0], s[1]]
        };
        let base = (t.data as *const u8).add(t.byte_offset as usize) as *const f32;
        sum = 0.0;
        for i in 0..shape[0] {
            for j in 0..shape[1] {
                sum += *base.offset((i * strides[0] + j * strides[1]) as isize) as f64;
            }
        }
    }
    if let Some(deleter) = (*tensor).deleter {
        deleter(tensor);
    }
    sum
}

fn offset<T, F>(base: &MaybeUninit<T>, field: *const F) -> u64 {
    (field as usize - base.as_ptr() as usize) as u64
}

/// Sizes, alignments and field offsets of the DLPack structs as Rust lays them out, in the
/// order tests/rust/test_rust_peer.cpp lists the C++ ones. Returns how many were written.
#[no_mangle]
pub unsafe extern "C" fn rust_layout(out: *mut u64, capacity: usize) -> usize {
    let t = MaybeUninit::<DLTensor>::uninit();
    let tp = t.as_ptr();
    let v = MaybeUninit::<DLManagedTensorVersioned>::uninit();
    let vp = v.as_ptr();
    let l = MaybeUninit::<DLManagedTensor>::uninit();
    let lp = l.as_ptr();
    let facts: [u64; 24] = [
        size_of::<DLPackVersion>() as u64,
        size_of::<DLDevice>() as u64,
        size_of::<DLDataType>() as u64,
        size_of::<DLTensor>() as u64,
        align_of::<DLTensor>() as u64,
        offset(&t, addr_of!((*tp).data)),
        offset(&t, addr_of!((*tp).device)),
        offset(&t, addr_of!((*tp).ndim)),
        offset(&t, addr_of!((*tp).dtype)),
        offset(&t, addr_of!((*tp).shape)),
        offset(&t, addr_of!((*tp).strides)),
        offset(&t, addr_of!((*tp).byte_offset)),
        size_of::<DLManagedTensorVersioned>() as u64,
        align_of::<DLManagedTensorVersioned>() as u64,
        offset(&v, addr_of!((*vp).version)),
        offset(&v, addr_of!((*vp).manager_ctx)),
        offset(&v, addr_of!((*vp).deleter)),
        offset(&v, addr_of!((*vp).flags)),
        offset(&v, addr_of!((*vp).dl_tensor)),
        size_of::<DLManagedTensor>() as u64,
        align_of::<DLManagedTensor>() as u64,
        offset(&l, addr_of!((*lp).dl_tensor)),
        offset(&l, addr_of!((*lp).manager_ctx)),
        offset(&l, addr_of!((*lp).deleter)),
    ];
    let n = facts.len().min(capacity);
    std::ptr::copy_nonoverlapping(facts.as_ptr(), out, n);
    facts.len()
}
