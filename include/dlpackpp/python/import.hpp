// SPDX-License-Identifier: Apache-2.0
/// @file
/// Owning import of any object that speaks DLPack: try_from_dlpack. The route, in the order
/// this file reads: the type's entry picks the path; the exchange table imports where it can
/// serve the request; otherwise `obj.__dlpack__(...)` is called (falling back once per type to
/// the legacy protocol), its capsule is taken, and what the legacy protocol could not promise
/// is checked. Adoption validates once, with every option the caller gave.
#pragma once

#include "dlpackpp/python/python_h.hpp"

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/exchange_api.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/python/capsule.hpp"
#include "dlpackpp/python/errors.hpp"
#include "dlpackpp/python/gil.hpp"
#include "dlpackpp/python/state.hpp"
#include "dlpackpp/python/type_cache.hpp"
#include "dlpackpp/validate.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE
namespace python {

/// How try_from_dlpack asks for a tensor: each optional is passed to `__dlpack__` as the
/// keyword of the same name only when set; `validate` checks the imported tensor.
struct ImportOptions {
  /// The consumer's stream (`stream=`), for the producer to synchronize with.
  std::optional<std::intptr_t> stream;
  /// The device the consumer wants the tensor on (`dl_device=`).
  std::optional<Device> dl_device;
  /// True: the producer must copy; false: it must not (`copy=`).
  std::optional<bool> copy;
  /// Checks applied to the imported tensor.
  ValidateOptions validate;
  /// True: a tensor that came through the legacy protocol (which cannot say whether it may
  /// be written) is imported READ_ONLY, as NumPy 2 does; false keeps it writable.
  bool legacy_read_only = false;
  /// True: the caller only reads the tensor, so the flags only a versioned tensor carries do
  /// not matter, and a producer without the exchange table is asked for the legacy capsule
  /// first (`__dlpack__()` with no keywords, which producers make for less: NumPy parses
  /// nothing), and asked again with max_version where it refuses (NumPy 2 for a read-only
  /// array). A tensor that came as legacy is then imported READ_ONLY: nothing says it may be
  /// written. Ignored where `copy` or `dl_device` is set (the legacy protocol cannot say).
  /// Measured on a typed NumPy 2 read: 1,457 -> 1,324 instructions (benchmarks/python_compare).
  bool only_reading = false;
  /// For borrowing (try_borrow, try_borrow_view, the binding casters): true asks for a view
  /// that may be written where the producer allows it. The exchange table's borrowing entry
  /// fills a bare DLTensor, which cannot say READ_ONLY, so its view is READ_ONLY unless this is
  /// set; with it set the tensor is imported with ownership instead (the table's owning entry
  /// or `__dlpack__`), whose flags say whether it may be written. try_from_dlpack ignores it.
  bool writable = false;
};

namespace detail {

// ---- 0. the preamble of every entry point ------------------------------------------------

// `obj` checked, this interpreter's state found and held for the call (see StateHold), then
// `body(in)`, whose Result is returned: written once for try_from_dlpack, current_stream,
// try_borrow and try_borrow_view.
template <class Body>
DLPACKPP_FORCE_INLINE auto with_state(PyObject* obj, Body&& body)
    -> std::invoke_result_t<Body&, Internals&> {
  if (DLPACKPP_UNLIKELY(obj == nullptr)) return make_error(Errc::null_pointer, "object is NULL");
  Internals* in = internals();
  if (DLPACKPP_UNLIKELY(in == nullptr)) return take_python_error("dlpackpp's interpreter state");
  const StateHold hold(*in);
  return body(*in);
}

// ---- 1. the path: the exchange table where it can serve the request ------------------------

// The table cannot carry a stream, a target device or a copy request: those go through
// __dlpack__.
inline bool exchange_can_serve(const ImportOptions& options) noexcept {
  return !options.stream && !options.dl_device && !(options.copy && *options.copy);
}

// Turns a failure of an exchange-table call into an Error, keeping the producer's Python
// exception when it set one.
DLPACKPP_COLD inline Error exchange_error(const Error& error, PyObject* obj, const char* what) {
  if (PyErr_Occurred() == nullptr) return error;
  std::string context = type_name_of(obj);
  context += "'s exchange API ";
  context += what;
  return take_python_error(context);
}

// PyTorch's own __dlpack__ refuses a tensor that requires grad ("use tensor.detach()"): writing
// it would bypass autograd. Its exchange table does not refuse, so an owning import through the
// table (which may write) asks the object as __dlpack__ would have: the route does not change
// the answer. Only types whose entry has `grad` (a table and a requires_grad attribute).
DLPACKPP_COLD inline Result<void> refuse_grad(Internals& in, PyObject* obj) {
  PyObject* attr = PyObject_GetAttr(obj, in.str_requires_grad);
  const int wanted = attr != nullptr ? PyObject_IsTrue(attr) : -1;
  Py_XDECREF(attr);
  if (wanted < 0) return take_python_error(type_name_of(obj) + ".requires_grad");
  if (wanted == 0) return {};
  return make_error(Errc::read_only, "the ", type_name_of(obj),
                    " requires grad: writing it would bypass autograd, so it is not handed "
                    "over where it could be written; pass tensor.detach()");
}

#if DLPACKPP_HAS_EXCHANGE_API
inline Result<ImportedTensor> import_exchange(Internals& in, const TypeEntry& entry, PyObject* obj,
                                              const ImportOptions& options) {
  const DLPackExchangeAPI* api = entry.api;
  if (DLPACKPP_UNLIKELY(entry.grad)) {
    Result<void> refused = refuse_grad(in, obj);  // runs Python: `entry` is not read after it
    if (!refused) return refused.error();
  }
  Result<ManagedTensor> r = ::dlpackpp::managed_from_object(api, obj, options.validate);
  if (DLPACKPP_UNLIKELY(!r))
    return exchange_error(r.error(), obj, "managed_tensor_from_py_object_no_sync");
  return r;
}
#endif

// ---- 2. the call: obj.__dlpack__(**the keywords in `mask`) ---------------------------------

// What a call of __dlpack__ with the keywords in `mask` passes, in vectorcall's layout: `obj`
// first, then each keyword's value in Internals::keyword_names order (the interpreter's tuple
// of their names is kwnames[mask]). Borrowed where they can be; the two made here are
// released when it dies. `ok` is false with a Python exception set where making one failed.
struct DlpackCallArguments {
  PyObject* storage[6] = {};  // storage[0]: the slot PY_VECTORCALL_ARGUMENTS_OFFSET allows
  PyObject* made[2] = {};
  Py_ssize_t count = 1;
  bool ok = true;

  DlpackCallArguments(const Internals& in, PyObject* obj, unsigned mask,
                      const ImportOptions& options) {
    storage[1] = obj;
    if ((mask & kw_max_version) != 0) storage[1 + count++] = in.max_version;
    if ((mask & kw_stream) != 0) {
      made[0] = PyLong_FromLongLong(static_cast<long long>(*options.stream));
      ok = ok && (storage[1 + count++] = made[0]) != nullptr;
    }
    if ((mask & kw_dl_device) != 0) {
      const Device d = *options.dl_device;
      made[1] = Py_BuildValue("(ii)", static_cast<int>(d.type()), static_cast<int>(d.id()));
      ok = ok && (storage[1 + count++] = made[1]) != nullptr;
    }
    if ((mask & kw_copy) != 0) storage[1 + count++] = *options.copy ? Py_True : Py_False;
  }
  DlpackCallArguments(const DlpackCallArguments&) = delete;
  DlpackCallArguments& operator=(const DlpackCallArguments&) = delete;
  ~DlpackCallArguments() {
    Py_XDECREF(made[0]);
    Py_XDECREF(made[1]);
  }
  PyObject** args() noexcept { return storage + 1; }
};

// Vectorcall (the full API 3.9+, the limited API 3.12+) calls __dlpack__ with the arguments as
// they are: no bound method, no tuple or dict. Before it, the attribute is looked up and called
// with a kwargs dict.
#if defined(Py_LIMITED_API) ? (Py_LIMITED_API + 0 >= 0x030C0000 && PY_VERSION_HEX >= 0x030C0000) \
                            : PY_VERSION_HEX >= 0x03090000
#define DLPACKPP_DETAIL_PY_VECTORCALL 1
#else
#define DLPACKPP_DETAIL_PY_VECTORCALL 0
#endif

// obj.__dlpack__(**the keywords in `mask`): through `method` (the type's __dlpack__ from
// dlpack_method, held by the caller) where it is not NULL, which is exactly the same call
// without binding a method (type_cache.hpp says when); a new reference or NULL with a Python
// exception set.
inline PyObject* call_dlpack(Internals& in, PyObject* obj, PyObject* method, unsigned mask,
                             const ImportOptions& options) {
  DlpackCallArguments a(in, obj, mask, options);
  if (DLPACKPP_UNLIKELY(!a.ok)) return nullptr;
  PyObject* names = mask != 0 ? in.kwnames[mask] : nullptr;
#if DLPACKPP_DETAIL_PY_VECTORCALL
  const std::size_t nargs = 1 | PY_VECTORCALL_ARGUMENTS_OFFSET;
  if (method != nullptr) return PyObject_Vectorcall(method, a.args(), nargs, names);
  return PyObject_VectorcallMethod(in.str_dlpack, a.args(), nargs, names);
#else
  static_cast<void>(method);  // NULL: dlpack_method needs the full API 3.9+
  PyObject* bound = PyObject_GetAttr(obj, in.str_dlpack);
  PyObject* empty = bound != nullptr ? PyTuple_New(0) : nullptr;
  PyObject* kwargs = empty != nullptr && mask != 0 ? PyDict_New() : nullptr;
  bool built = empty != nullptr && (mask == 0 || kwargs != nullptr);
  for (Py_ssize_t i = 1; built && i < a.count; ++i)
    built = PyDict_SetItem(kwargs, PyTuple_GetItem(names, i - 1), a.args()[i]) == 0;
  PyObject* result = built ? PyObject_Call(bound, empty, kwargs) : nullptr;
  Py_XDECREF(kwargs);
  Py_XDECREF(empty);
  Py_XDECREF(bound);
  return result;
#endif
}

// Whether `exc` passed through more than one Python frame on its way out of __dlpack__: then
// code the producer ran raised it (a producer that calls back into an importer), not the
// call's argument binding (no frame) or __dlpack__'s own body (one frame: a Python wrapper
// around a C producer that rejects the keyword).
inline bool raised_below_dlpack(const RaisedError& exc) {
  PyObject* tb = exc.traceback();
  PyObject* next = tb != nullptr ? PyObject_GetAttrString(tb, "tb_next") : nullptr;
  const bool deeper = next != nullptr && next != Py_None;
  Py_XDECREF(next);
  Py_XDECREF(tb);
  PyErr_Clear();
  return deeper;
}

// Whether the pending TypeError is about the keywords: raised by the call itself or
// __dlpack__'s own frame (see raised_below_dlpack), and naming one of those in `mask`, or
// keyword arguments at all ("got an unexpected keyword argument 'max_version'", "takes no
// keyword arguments"). Only that is a refusal of the newer protocol. Any other TypeError is not
// retried: a re-entrant producer's TypeError from below, whatever it says, comes out of every
// level, and a retry at each would double the calls per level.
DLPACKPP_COLD inline bool refuses_keyword(Internals& in, unsigned mask) {
  RaisedError pending;
  pending.fetch();
  PyObject* text =
      !pending.empty() && !raised_below_dlpack(pending) ? PyObject_Str(pending.value()) : nullptr;
  PyObject* keyword = PyUnicode_FromString("keyword argument");
  bool named = text != nullptr && keyword != nullptr && PyUnicode_Contains(text, keyword) == 1;
  Py_XDECREF(keyword);
  for (unsigned bit = 0; text != nullptr && !named && bit < 4; ++bit) {
    if ((mask & (1u << bit)) != 0) named = PyUnicode_Contains(text, in.keyword_names[bit]) == 1;
  }
  Py_XDECREF(text);
  PyErr_Clear();
  pending.restore();
  return named;
}

// The capsule of obj.__dlpack__: with max_version (and dl_device, copy) unless the type is
// known to speak only the legacy protocol. An older producer rejects max_version with a
// TypeError naming it: the call is retried without the new keywords. Unless the retry fails
// with TypeError too (then the first TypeError meant something else and is the one
// reported), the type speaks the legacy protocol: `legacy` turns true and is remembered for
// the type, and a refusal of the retry (e.g. NumPy 1.x's BufferError for a read-only array)
// is reported.
inline PyObject* dlpack_capsule(Internals& in, PyObject* obj, PyObject* method, bool& legacy,
                                const ImportOptions& options) {
  if constexpr (!capsule_names<ImportedStruct>::versioned) {
    legacy = true;  // this dlpack.h cannot read a versioned tensor, so never ask for one
  }
  const unsigned legacy_mask = options.stream ? unsigned{kw_stream} : 0u;
  unsigned mask = legacy_mask;
  if (!legacy) {
    mask |= kw_max_version;
    if (options.dl_device) mask |= kw_dl_device;
    if (options.copy) mask |= kw_copy;
  }
  PyObject* capsule = call_dlpack(in, obj, method, mask, options);
  if (DLPACKPP_LIKELY(capsule != nullptr) || legacy ||
      PyErr_ExceptionMatches(PyExc_TypeError) == 0 || !refuses_keyword(in, mask & ~legacy_mask)) {
    return capsule;
  }
  RaisedError first;
  first.fetch();
  capsule = call_dlpack(in, obj, method, legacy_mask, options);
  if (capsule != nullptr || PyErr_ExceptionMatches(PyExc_TypeError) == 0) {
    first.clear();
    legacy = true;
    remember_legacy(in, reinterpret_cast<PyObject*>(Py_TYPE(obj)));
  } else {
    PyErr_Clear();
    first.restore();
  }
  return capsule;
}

// dlpack_capsule(), asking for the legacy capsule first where the caller only reads (see
// ImportOptions::only_reading) and the type is not known to be legacy already: `legacy` says
// which kind was asked for last. Only a BufferError (NumPy 2 for a read-only array) is asked
// again; anything else the producer raised is the answer.
inline PyObject* capsule_to_read(Internals& in, PyObject* obj, PyObject* method, bool& legacy,
                                 const ImportOptions& options) {
  if (options.only_reading && !legacy && !options.copy && !options.dl_device) {
    bool ask_legacy = true;
    if (PyObject* capsule = dlpack_capsule(in, obj, method, ask_legacy, options)) {
      legacy = true;
      return capsule;
    }
    if (PyErr_ExceptionMatches(PyExc_BufferError) == 0) return nullptr;
    PyErr_Clear();  // refused: asked again with max_version
  }
  return dlpack_capsule(in, obj, method, legacy, options);
}

// ---- 3. what the legacy protocol could not promise ----------------------------------------

// The flags a legacy tensor gets: READ_ONLY on request, or for a reader (nothing says it may
// be written); none where the dlpack.h in force has no versioned struct to carry them.
inline std::uint64_t legacy_flags_of(const ImportOptions& options) noexcept {
  return DLPACKPP_HAS_VERSIONED && (options.legacy_read_only || options.only_reading)
             ? flag::read_only
             : 0u;
}

// It knows neither dl_device nor copy: the request is checked against what came (a tensor on
// `got`). The caller releases the tensor where this fails.
DLPACKPP_COLD inline Result<void> check_legacy_result(Device got, PyObject* obj,
                                                      const ImportOptions& options) {
  if (options.copy && *options.copy) {
    return make_error(Errc::version_mismatch, type_name_of(obj),
                      ".__dlpack__ speaks only the legacy protocol (it rejected max_version), "
                      "which cannot promise the copy=True that was asked for");
  }
  if (options.dl_device && got != *options.dl_device) {
    return make_error(Errc::device_mismatch, type_name_of(obj), ".__dlpack__ gave a tensor on ",
                      got.to_string(), ", dl_device asked for ", options.dl_device->to_string(),
                      " and the legacy protocol cannot move it");
  }
  return {};
}

// Steps 2 and 3, through the type's __dlpack__ where it may be called directly (dlpack_method).
inline Result<ImportedTensor> import_dlpack(Internals& in, PyObject* obj, bool legacy,
                                            const ImportOptions& options) {
  const HeldRef method(dlpack_method(in, obj));
  PyObject* capsule = capsule_to_read(in, obj, method.get(), legacy, options);
  if (DLPACKPP_UNLIKELY(capsule == nullptr))
    return take_python_error(type_name_of(obj) + ".__dlpack__");
  Result<ImportedTensor> r =
      import_capsule(capsule, options.validate, legacy_flags_of(options), legacy);
  Py_DECREF(capsule);  // renamed when consumed, so its destructor does nothing
  if (DLPACKPP_UNLIKELY(r && legacy && (options.copy || options.dl_device))) {
    Result<void> kept = check_legacy_result(r->device(), obj, options);
    if (!kept) return kept.error();  // `r` releases the tensor
  }
  return r;
}

}  // namespace detail

/// Imports any object that speaks DLPack, taking ownership of what it exports. Where
/// `type(obj)` offers the exchange API (and no stream, dl_device or copy=True is asked for)
/// its `managed_tensor_from_py_object_no_sync` is used: no stream synchronization, so launch
/// work on current_stream(obj, device). Otherwise `obj.__dlpack__(max_version=(1, N), ...)`,
/// retried without the keywords an older producer rejects with TypeError (remembered per
/// type). A Python exception from the producer comes back as an Error that
/// set_python_error() re-raises unchanged.
inline Result<ImportedTensor> try_from_dlpack(PyObject* obj, const ImportOptions& options = {}) {
  using detail::Internals;
  return detail::with_state(obj, [&](Internals& in) -> Result<ImportedTensor> {
    const detail::TypeEntry* entry = detail::type_entry_of(in, obj);
    if (DLPACKPP_UNLIKELY(entry == nullptr))
      return detail::take_python_error("dlpackpp's type cache");
#if DLPACKPP_HAS_EXCHANGE_API
    if (entry->api != nullptr && detail::exchange_can_serve(options))
      return detail::import_exchange(in, *entry, obj, options);
#endif
    return detail::import_dlpack(in, obj, entry->legacy, options);
  });
}

/// As try_from_dlpack, throwing the Error.
inline ImportedTensor from_dlpack(PyObject* obj, const ImportOptions& options = {}) {
  return try_from_dlpack(obj, options).value();
}

/// The producer's current work stream for `device`, from its exchange API: launch work that
/// reads an exchange-imported tensor there. NULL for CPU or a producer without the exchange
/// API.
inline Result<void*> current_stream(PyObject* obj, Device device) {
  if (obj != nullptr && device == Device::cpu()) return static_cast<void*>(nullptr);
  return detail::with_state(obj, [&](detail::Internals& in) -> Result<void*> {
#if DLPACKPP_HAS_EXCHANGE_API
    const detail::TypeEntry* entry = detail::type_entry_of(in, obj);
    if (entry == nullptr) return detail::take_python_error("dlpackpp's type cache");
    if (const auto* api = entry->api) {
      Result<void*> stream = ::dlpackpp::current_stream(api, device);
      if (!stream) return detail::exchange_error(stream.error(), obj, "current_work_stream");
      return stream;
    }
#else
    static_cast<void>(in);
#endif
    return static_cast<void*>(nullptr);  // a producer without the exchange API
  });
}

}  // namespace python
DLPACKPP_END_NAMESPACE
