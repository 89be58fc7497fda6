// SPDX-License-Identifier: Apache-2.0
/// @file
/// Error codes, the Error exception, Result<T> and the no-exceptions error handler.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/detail/shared_array.hpp"
#include "dlpackpp/detail/text.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE

/// One code per distinct way a DLPack tensor or request can be wrong.
enum class Errc : int {
  version_mismatch = 1,  ///< DLManagedTensorVersioned major version differs from the header's.
  null_pointer,          ///< A pointer that must not be NULL was NULL.
  invalid_ndim,          ///< ndim is negative.
  null_shape,            ///< shape is NULL while ndim > 0.
  negative_shape,        ///< A dimension is negative.
  null_strides,          ///< strides is NULL while ndim > 0 under DLPack >= 1.2 strictness.
  null_data,             ///< data is NULL while the tensor has elements.
  size_overflow,         ///< Element count or byte size does not fit in int64_t.
  offset_overflow,       ///< A strided extent or data + byte_offset wraps around.
  misaligned,            ///< data + byte_offset is not aligned as requested.
  unsupported_dtype,     ///< Unknown code, bits/lanes of 0, or a code/bits pair DLPack lacks.
  dtype_mismatch,        ///< The dtype differs from the one the caller requires.
  unsupported_device,    ///< Unknown device type or a negative device id.
  device_mismatch,       ///< The device differs from the one the caller requires.
  rank_mismatch,         ///< ndim differs from the one the caller requires.
  read_only,             ///< A mutable access to a READ_ONLY tensor.
  not_contiguous,        ///< The caller requires a row-major contiguous tensor.
  invalid_flags,         ///< Flags that contradict the tensor (e.g. padded on a >= 8-bit type).
  invalid_argument,      ///< An argument that does not parse or does not fit.
  out_of_range,          ///< An index outside its valid range.
  shape_mismatch,        ///< An extent differs from the one the caller requires.
  overlapping,           ///< A mutable access to a layout whose elements share addresses.
};

/// The enumerator's name, e.g. "negative_shape"; "unknown" for values outside Errc.
constexpr const char* to_string(Errc code) noexcept {
  switch (code) {
    case Errc::version_mismatch:
      return "version_mismatch";
    case Errc::null_pointer:
      return "null_pointer";
    case Errc::invalid_ndim:
      return "invalid_ndim";
    case Errc::null_shape:
      return "null_shape";
    case Errc::negative_shape:
      return "negative_shape";
    case Errc::null_strides:
      return "null_strides";
    case Errc::null_data:
      return "null_data";
    case Errc::size_overflow:
      return "size_overflow";
    case Errc::offset_overflow:
      return "offset_overflow";
    case Errc::misaligned:
      return "misaligned";
    case Errc::unsupported_dtype:
      return "unsupported_dtype";
    case Errc::dtype_mismatch:
      return "dtype_mismatch";
    case Errc::unsupported_device:
      return "unsupported_device";
    case Errc::device_mismatch:
      return "device_mismatch";
    case Errc::rank_mismatch:
      return "rank_mismatch";
    case Errc::read_only:
      return "read_only";
    case Errc::not_contiguous:
      return "not_contiguous";
    case Errc::invalid_flags:
      return "invalid_flags";
    case Errc::invalid_argument:
      return "invalid_argument";
    case Errc::out_of_range:
      return "out_of_range";
    case Errc::shape_mismatch:
      return "shape_mismatch";
    case Errc::overlapping:
      return "overlapping";
  }
  return "unknown";
}

/// A failed DLPack operation: a code to branch on and a message naming the field and value.
class Error : public std::exception {
 public:
  /// `detail` is the specific part; what() prefixes it with "dlpackpp: ".
  Error(Errc code, std::string_view detail) : code_(code), what_(prefix_size + detail.size() + 1) {
    char* text = what_.data();
    for (std::size_t i = 0; i < prefix_size; ++i) text[i] = prefix[i];
    for (std::size_t i = 0; i < detail.size(); ++i) text[prefix_size + i] = detail[i];
    text[prefix_size + detail.size()] = '\0';
  }

  /// The failure's code.
  Errc code() const noexcept { return code_; }
  /// "dlpackpp: <field> is <value>, <expectation>".
  const char* what() const noexcept override { return what_.data(); }

 private:
  static constexpr const char prefix[] = "dlpackpp: ";
  static constexpr std::size_t prefix_size = sizeof(prefix) - 1;

  Errc code_;
  // Shared so that copying an exception never allocates or throws.
  detail::SharedArray<char> what_;
};

/// Called with the error when a throwing entry point fails and exceptions are disabled.
using ErrorHandler = void (*)(const Error&) noexcept;

namespace detail {
inline void default_error_handler(const Error& e) noexcept {
  std::fputs(e.what(), stderr);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  std::abort();
}

// A function-local static keeps one handler per program in a header-only library.
inline ErrorHandler& error_handler_slot() noexcept {
  static ErrorHandler handler = &default_error_handler;
  return handler;
}
}  // namespace detail

/// Installs `handler` (NULL restores the default) and returns the previous one. Set it once,
/// before other threads use the library. A handler that returns still ends in abort().
inline ErrorHandler set_error_handler(ErrorHandler handler) noexcept {
  ErrorHandler& slot = detail::error_handler_slot();
  ErrorHandler previous = slot;
  slot = handler ? handler : &detail::default_error_handler;
  return previous;
}

/// Throws `e`, or without exceptions hands it to the error handler and aborts.
[[noreturn]] inline void throw_error(const Error& e) {
#if DLPACKPP_USE_EXCEPTIONS
  throw e;
#else
  detail::error_handler_slot()(e);
  std::abort();
#endif
}

namespace detail {
/// Builds an Error from message parts (strings, characters and integers).
template <class... Parts>
Error make_error(Errc code, const Parts&... parts) {
  TextBuilder text;
  (text << ... << parts);
  return Error(code, text.view());
}

}  // namespace detail

namespace detail {
// Never constructed: stands in for `const Result&` (or `const T&`) when T cannot be copied, so
// that Result has no copy operations (the user-declared moves delete the implicit ones), takes
// no `const T&`, and std::is_copy_constructible and std::is_constructible tell the truth.
template <int Which>
struct NotCopyable {
  NotCopyable() = delete;
};
// Tags Result's constructor that builds the value from what a callable returns: the prvalue is
// made straight in place (C++17 elision), so a large value is never copied or moved into it.
struct BuildWith {};
// Picks the copy operations' parameter without std::conditional_t.
template <bool Copyable>
struct CopySource {
  template <class R, int Which>
  using type = const R&;
};
template <>
struct CopySource<false> {
  template <class R, int Which>
  using type = const NotCopyable<Which>&;
};
}  // namespace detail

// Type-trait built-ins where the compiler has them: every Result<T> in the headers asks these
// questions, and the std:: traits answer through chains of class templates (__and_, __or_,
// is_reference, ...) that each translation unit instantiates again.
#if (defined(__clang__) || defined(_MSC_VER) || (defined(__GNUC__) && __GNUC__ >= 11)) && \
    !defined(__CUDACC__) && !defined(__EDG__)
// A type argument cannot be parenthesized, so `T` stands bare in both.
// NOLINTNEXTLINE(bugprone-macro-parentheses)
#define DLPACKPP_DETAIL_IS_COPYABLE(T) __is_constructible(T, const T&)
// NOLINTNEXTLINE(bugprone-macro-parentheses)
#define DLPACKPP_DETAIL_IS_NOTHROW_MOVABLE(T) __is_nothrow_constructible(T, T &&)
// NOLINTNEXTLINE(bugprone-macro-parentheses)
#define DLPACKPP_DETAIL_IS_NOTHROW_COPYABLE(T) __is_nothrow_constructible(T, const T&)
#else
#define DLPACKPP_DETAIL_IS_COPYABLE(T) std::is_copy_constructible<T>::value
#define DLPACKPP_DETAIL_IS_NOTHROW_MOVABLE(T) std::is_nothrow_move_constructible<T>::value
#define DLPACKPP_DETAIL_IS_NOTHROW_COPYABLE(T) std::is_nothrow_copy_constructible<T>::value
#endif

/// Either a T or the Error that prevented it: the non-throwing face of every checked call.
template <class T>
class [[nodiscard]] Result {
  static_assert(!std::is_reference<T>::value, "Result<T&> is not supported");
  using copy_source =
      typename detail::CopySource<DLPACKPP_DETAIL_IS_COPYABLE(T)>::template type<Result, 0>;
  using value_source =
      typename detail::CopySource<DLPACKPP_DETAIL_IS_COPYABLE(T)>::template type<T, 1>;

 public:
  /// The value type.
  using value_type = T;

  /// A success holding a copy of `value` (one copy, straight into place; only where T is
  /// copyable).
  Result(value_source value) noexcept(DLPACKPP_DETAIL_IS_NOTHROW_COPYABLE(T)) : ok_(true) {
    ::new (static_cast<void*>(&value_)) T(value);
  }
  /// A success holding `value`, moved straight into place.
  Result(T&& value) noexcept(DLPACKPP_DETAIL_IS_NOTHROW_MOVABLE(T)) : ok_(true) {
    ::new (static_cast<void*>(&value_)) T(std::move(value));
  }
  /// A failure holding `error`.
  Result(Error error) noexcept : ok_(false) {
    ::new (static_cast<void*>(&error_)) Error(std::move(error));
  }
  /// A success holding the T that `make()` returns, made in place (for the library's hot
  /// paths: a view returned this way is built once, never copied into the Result).
  template <class Make>
  Result(detail::BuildWith, Make&& make) noexcept(noexcept(make())) : ok_(true) {
    ::new (static_cast<void*>(&value_)) T(make());
  }
  /// A copy of `other`'s value or error (only where T is copyable).
  Result(copy_source other) : ok_(other.ok_) { construct_from(other); }
  /// Takes `other`'s value or error.
  Result(Result&& other) noexcept(DLPACKPP_DETAIL_IS_NOTHROW_MOVABLE(T)) : ok_(other.ok_) {
    construct_from(std::move(other));
  }
  /// Replaces the held value or error with a copy of `other`'s (only where T is copyable).
  Result& operator=(copy_source other) {
    if (this != &other) {
      Result copy(other);
      destroy();
      ok_ = copy.ok_;
      construct_from(std::move(copy));
    }
    return *this;
  }
  /// Replaces the held value or error with `other`'s.
  Result& operator=(Result&& other) noexcept(DLPACKPP_DETAIL_IS_NOTHROW_MOVABLE(T)) {
    if (this != &other) {
      destroy();
      ok_ = other.ok_;
      construct_from(std::move(other));
    }
    return *this;
  }
  ~Result() { destroy(); }

  /// True when a value is held.
  explicit operator bool() const noexcept { return ok_; }
  /// True when a value is held.
  bool has_value() const noexcept { return ok_; }

  /// The value; throws (or reports) the held Error when there is none.
  T& value() & {
    if (!ok_) throw_error(error_);
    return value_;
  }
  /// The value; throws (or reports) the held Error when there is none.
  const T& value() const& {
    if (!ok_) throw_error(error_);
    return value_;
  }
  /// Moves the value out (by value, so `const auto& x = f().value();` cannot dangle);
  /// throws (or reports) the held Error when there is none.
  T value() && {
    if (DLPACKPP_UNLIKELY(!ok_)) throw_error(error_);
    return std::move(value_);
  }
  /// The value, which must be present.
  T& operator*() & noexcept { return checked(), value_; }
  /// The value, which must be present.
  const T& operator*() const& noexcept { return checked(), value_; }
  /// Moves the value out (by value, as value() &&); it must be present.
  T operator*() && noexcept(DLPACKPP_DETAIL_IS_NOTHROW_MOVABLE(T)) {
    return checked(), std::move(value_);
  }
  /// Member access to the value, which must be present.
  T* operator->() noexcept { return checked(), &value_; }
  /// Member access to the value, which must be present.
  const T* operator->() const noexcept { return checked(), &value_; }
  /// The error, which must be present (check `has_value()` first).
  const Error& error() const noexcept {
    DLPACKPP_ASSERT(!ok_, "Result::error() called on a Result that holds a value");
    return error_;
  }

 private:
  void checked() const noexcept {
    DLPACKPP_ASSERT(ok_, "Result dereferenced while it holds an error");
  }
  void destroy() noexcept {
    if (ok_) {
      value_.~T();
    } else {
      error_.~Error();
    }
  }
  // The one place a held value or error is built from another Result's (`ok_` already set);
  // `Source` is `const Result&` to copy or `Result&&` to move.
  template <class Source>
  void construct_from(Source&& other) {
    if (ok_) {
      ::new (static_cast<void*>(&value_)) T(std::forward<Source>(other).value_);
    } else {
      ::new (static_cast<void*>(&error_)) Error(std::forward<Source>(other).error_);
    }
  }

  union {
    T value_;
    Error error_;
  };
  bool ok_;
};
#undef DLPACKPP_DETAIL_IS_COPYABLE
#undef DLPACKPP_DETAIL_IS_NOTHROW_MOVABLE
#undef DLPACKPP_DETAIL_IS_NOTHROW_COPYABLE

/// Success or the Error that prevented it, for checks that produce nothing.
template <>
class [[nodiscard]] Result<void> {
 public:
  /// The value type.
  using value_type = void;

  /// A success.
  Result() noexcept : ok_(true) {}
  /// A failure holding `error`.
  Result(Error error) noexcept : ok_(false) {
    ::new (static_cast<void*>(&error_)) Error(std::move(error));
  }
  /// A copy of `other`'s outcome.
  Result(const Result& other) noexcept : ok_(other.ok_) {
    if (!ok_) ::new (static_cast<void*>(&error_)) Error(other.error_);
  }
  /// Replaces the outcome with a copy of `other`'s.
  Result& operator=(const Result& other) noexcept {
    if (this == &other) return *this;
    if (!ok_ && !other.ok_) {
      error_ = other.error_;
    } else if (!ok_) {
      error_.~Error();
    } else if (!other.ok_) {
      ::new (static_cast<void*>(&error_)) Error(other.error_);
    }
    ok_ = other.ok_;
    return *this;
  }
  ~Result() {
    if (!ok_) error_.~Error();
  }

  /// True on success.
  explicit operator bool() const noexcept { return ok_; }
  /// True on success.
  bool has_value() const noexcept { return ok_; }
  /// Throws (or reports) the held Error, if any.
  void value() const {
    if (!ok_) throw_error(error_);
  }
  /// The error, which must be present (check `has_value()` first).
  const Error& error() const noexcept {
    DLPACKPP_ASSERT(!ok_, "Result<void>::error() called on a success");
    return error_;
  }

 private:
  // The union keeps the common success case allocation-free and trivially cheap.
  union {
    Error error_;
  };
  bool ok_;
};

DLPACKPP_END_NAMESPACE
