# SPDX-License-Identifier: Apache-2.0
"""The rules one export's fields can break, each with its one sentence.

dlpackpp.inspect lists these sentences as `problems`, and the kit's checks word the same rules
with them, so a user who reads an inspect table and a kit report reads one wording. Each
function returns the sentence for what was seen; the constants ending in _RULE say where the
spec says it (the kit's `rule` column). Also the names dlpack.h gives the fields' values.
"""

PY = "Python spec (__dlpack__)"
HDR = "dlpack.h"
TABLE = "dlpack.h 1.3 (DLPackExchangeAPI)"

READ_ONLY, IS_COPIED, IS_SUBBYTE_TYPE_PADDED = 1, 2, 4
FLAG_NAMES = {READ_ONLY: "READ_ONLY", IS_COPIED: "IS_COPIED",
              IS_SUBBYTE_TYPE_PADDED: "IS_SUBBYTE_TYPE_PADDED"}

# DLDataTypeCode -> the name dlpack.h's comments and the frameworks use (bits appended where
# the code is a family: int, uint, float, bfloat, complex).
DTYPE_CODES = {0: "int", 1: "uint", 2: "float", 3: "opaque_handle", 4: "bfloat", 5: "complex",
               6: "bool", 7: "float8_e3m4", 8: "float8_e4m3", 9: "float8_e4m3b11fnuz",
               10: "float8_e4m3fn", 11: "float8_e4m3fnuz", 12: "float8_e5m2",
               13: "float8_e5m2fnuz", 14: "float8_e8m0fnu", 15: "float6_e2m3fn",
               16: "float6_e3m2fn", 17: "float4_e2m1fn"}
_FAMILIES = (0, 1, 2, 4, 5)
# The width dlpack.h fixes for a code (bool is 8 bits, "as per common array library
# convention"; the fp8/fp6/fp4 codes name their width).
DTYPE_BITS = dict([(6, 8)] + [(c, 8) for c in range(7, 15)] + [(15, 6), (16, 6), (17, 4)])

DEVICE_TYPES = {1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL", 7: "kDLVulkan",
                8: "kDLMetal", 9: "kDLVPI", 10: "kDLROCM", 11: "kDLROCMHost", 12: "kDLExtDev",
                13: "kDLCUDAManaged", 14: "kDLOneAPI", 15: "kDLWebGPU", 16: "kDLHexagon",
                17: "kDLMAIA", 18: "kDLTrn"}

#: The newest header whose codes, device types and flags these tables know: a newer minor
#: may add some, so nothing is called unknown in a capsule that says it is newer.
KNOWN = (1, 3)


def dtype_name(code, bits, lanes):
    """'float32', 'bool', 'float8_e4m3fn', 'float32x4' (lanes), or 'code 200' (unknown)."""
    base = DTYPE_CODES.get(code)
    if base is None:
        return "code %d" % code
    if code in _FAMILIES:
        base += str(bits)
    return base if lanes == 1 else "%sx%d" % (base, lanes)


def device_name(device_type):
    """'kDLCPU', or 'device type 99' for one dlpack.h does not define."""
    return DEVICE_TYPES.get(device_type, "device type %d" % device_type)


def flag_names(flags):
    """The names of the bits set in `flags`; an unknown bit as its hex value ('0x8')."""
    names = []
    bit = 1
    while bit <= flags:
        if flags & bit:
            names.append(FLAG_NAMES.get(bit, "%#x" % bit))
        bit <<= 1
    return tuple(names)


# --- the capsule and its version -----------------------------------------------------------

NAME_RULE = PY + ": a 'dltensor' or 'dltensor_versioned' capsule"


def capsule_name(name):
    """A capsule whose name is not one DLPack gives a tensor (no field is read)."""
    return ("the capsule is named %r, not 'dltensor' or 'dltensor_versioned': no field read"
            % name)


def consumed(name):
    """A capsule a consumer already took (renamed used_...): its tensor is the consumer's."""
    return ("the capsule is named %r: a consumer already took its tensor (and may have freed "
            "it), so no field read" % name)


def not_a_capsule(what):
    """__dlpack__ returned something else than a capsule."""
    return "__dlpack__ returned a %s, not a capsule" % what


VERSIONED_RULE = (PY + " (array API 2023.12): max_version >= (1, 0) gets a 'dltensor_versioned' "
                  "capsule; consumers still tell the kind by its name")


def legacy_for_versioned(request):
    """A producer that took max_version >= (1, 0) and still gave a legacy capsule."""
    return "max_version=%s gave a legacy 'dltensor'" % (request,)


MAJOR_RULE = PY + ": version.major never above the requested major"


def major_above(request, name, version):
    """A producer that gave a major above the one asked for."""
    return "max_version=%s gave %r version %s" % (request, name, version)


UNKNOWN_MAJOR_RULE = HDR + ": a major version other than the consumer's: read no other field"


def unknown_major(version):
    """A versioned capsule of another major: its layout past the version is unknown."""
    return ("version.major is %d (version %d.%d): a DLPack 1 consumer reads no field past the "
            "version" % (version[0], version[0], version[1]))


# --- the tensor's fields -------------------------------------------------------------------

NULL_STRIDES_RULE = ("dlpack.h >= 1.2: strides 'can not be NULL if ndim != 0' vs Python spec: "
                     "NULL strides mean row-major")


def null_strides(version):
    """A 1.2+ capsule with NULL strides for ndim != 0."""
    return "a %d.%d capsule with NULL strides" % tuple(version)


SHAPE_RULE = HDR + ": shape 'can be set to NULL' only when ndim == 0; extents are not negative"


def bad_ndim(ndim):
    """ndim below 0, or above what any framework holds (shape and strides are not read)."""
    return "ndim is %d: shape and strides not read" % ndim


def null_shape(ndim):
    """NULL shape for ndim != 0."""
    return "shape is NULL for ndim %d" % ndim


def negative_extent(shape):
    """A negative extent in shape."""
    return "shape %s has a negative extent" % (tuple(shape),)


DATA_RULE = HDR + ": data points at the elements (NULL only for a tensor of size zero)"


def null_data(size):
    """NULL data for a tensor that has elements."""
    return "data is NULL for a tensor of %d element%s" % (size, "" if size == 1 else "s")


DTYPE_RULE = HDR + ": DLDataType (code, bits, lanes): a code it defines, lanes >= 1, bool 8 bits"


def unknown_code(code):
    """A type code dlpack.h (up to KNOWN) does not define."""
    return "dtype code %d is not one dlpack.h %d.%d defines" % ((code,) + KNOWN)


def bad_bits(name, bits, want):
    """A code whose width dlpack.h fixes, with another width."""
    return "%s with %d bits (dlpack.h: %d)" % (name, bits, want)


def zero_field(what):
    """dtype bits or lanes of 0: no element has that size."""
    return "dtype %s is 0" % what


DEVICE_RULE = HDR + ": DLDevice.device_type is a DLDeviceType"


def unknown_device(device_type):
    """A device type dlpack.h (up to KNOWN) does not define."""
    return "device type %d is not one dlpack.h %d.%d defines" % ((device_type,) + KNOWN)


FLAGS_RULE = HDR + ": flags holds the DLPACK_FLAG_BITMASK_* bits (IS_SUBBYTE_TYPE_PADDED for " \
    "sub-byte types)"


def unknown_flags(flags):
    """Flag bits dlpack.h (up to KNOWN) does not define."""
    return "flags %#x set bits dlpack.h %d.%d does not define" % ((flags,) + KNOWN)


def padded_not_subbyte(bits):
    """IS_SUBBYTE_TYPE_PADDED on a dtype of 8 bits or more."""
    return "IS_SUBBYTE_TYPE_PADDED on a %d-bit dtype (the flag is for sub-byte types)" % bits


# --- __dlpack_device__ and the exchange table ----------------------------------------------

DEVICE_PAIR_RULE = PY + ": __dlpack_device__ returns a pair of ints"


def device_not_pair(dev):
    """__dlpack_device__() returned something else than a pair of ints."""
    return "__dlpack_device__() returned %r, not a pair of ints" % (dev,)


DEVICE_AGREES_RULE = PY + ": __dlpack_device__ equals the capsule's device"


def device_differs(dev, device):
    """__dlpack_device__() and the capsule's device disagree."""
    return "__dlpack_device__() says %r, the capsule's device is %s" % (dev, tuple(device))


TABLE_NAME_RULE = TABLE + ": capsule name"


def table_name(name):
    """The type's exchange table is a capsule of another name (it is not read)."""
    return "the exchange table's capsule is named %r" % name


INTEGER_TABLE_RULE = ("dlpack.h 1.2: 'set on the type as a Python integer' vs 1.3: a "
                      "'dlpack_exchange_api' capsule")


def integer_table():
    """An integer __dlpack_c_exchange_api__ (the 1.2 draft's form, never dereferenced)."""
    return "an integer exchange table (the 1.2 form)"


TABLE_ENTRY_RULE = TABLE + ": 'This function must not be NULL'"


def table_entry_null(entry):
    """A required entry of the exchange table is NULL."""
    return "the exchange table's %s is NULL" % entry


def table_import_failed(rc):
    """managed_tensor_from_py_object_no_sync failed without raising."""
    return ("the exchange table's managed_tensor_from_py_object_no_sync returned %d with no "
            "Python exception set" % rc)


IMPORT_RULE = TABLE + ": the table's import equals __dlpack__'s"


def in_table_import(problem):
    """A field rule the table's import breaks (the sentence of that rule)."""
    return "the exchange table's import: " + problem


def import_differs(key, got, want, what="the table's import"):
    """The table's import (or borrow) and __dlpack__ disagree on one field."""
    return "%s %s is %s, __dlpack__ gave %s" % (what, key, got, want)


def import_starts(got, want, what="the table's import"):
    """The table's import (or borrow) starts elsewhere than __dlpack__'s tensor."""
    return "%s starts at %s, __dlpack__ at %s" % (what, _address(got), _address(want))


def _address(value):
    return "%#x" % value if isinstance(value, int) else str(value)


TABLE_MAJOR_RULE = TABLE + ": the consumer must find its major version"


def table_major(chain):
    """An exchange table whose prev_api chain holds no table of major 1."""
    return "no exchange table of major 1 in the chain %s" % (chain,)
