// SPDX-License-Identifier: BSD-3-Clause
// Small integer expressions in the rank r and the process count n (r ^ 4, r & (r - 1), (r + n/2) % n), and the
// enumerative search that finds one reproducing sampled values: the modeler's fallback for rank-dependent
// quantities (peers, roots) that its structured patterns miss.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace p3s::modeler {

/// An integer expression tree over r, n, integer constants and a few n-derived terms. Arithmetic is on 64-bit
/// integers; "/" is floor division, "%" the non-negative modulo (0 <= a % b < |b|), "^" exclusive or, "&" and "|"
/// bitwise and/or, "<<" and ">>" shifts (arithmetic; the shift count must be in [0, 62]). Precedence, lowest first:
/// | ^ & (<< >>) (+ -) (* / %), all left-associative, as in C and Python.
class Expression {
 public:
  /// Node kinds: the terminals, then the binary operators.
  enum class Op : std::uint8_t {
    R,           ///< the rank
    N,           ///< the process count
    Constant,    ///< an integer literal
    FloorSqrtN,  ///< floor(sqrt(n))
    FloorLog2N,  ///< floor(log2(n))
    Dims2Major,  ///< dims2(n)[0] (MPI_Dims_create(n, 2), larger side)
    Dims2Minor,  ///< dims2(n)[1]
    Add,         ///< a + b
    Sub,         ///< a - b
    Mul,         ///< a*b
    Div,         ///< a/b, floor division
    Mod,         ///< a % b, in [0, |b|)
    Xor,         ///< a ^ b
    And,         ///< a & b
    Or,          ///< a | b
    Shl,         ///< a << b
    Shr,         ///< a >> b
  };

  /// The constant 0.
  Expression();
  /// A terminal (R, N, a literal `constant` with Op::Constant, or an n-derived term).
  /// @throws p3s::InputError when op is a binary operator.
  [[nodiscard]] static Expression terminal(Op op, std::int64_t constant = 0);
  /// lhs op rhs. @throws p3s::InputError when op is not a binary operator.
  [[nodiscard]] static Expression binary(Op op, const Expression& lhs, const Expression& rhs);
  /// Parses what to_string() writes (spaces optional). @throws p3s::InputError with the position of the error.
  [[nodiscard]] static Expression parse(std::string_view text);

  /// The value at process count n and rank r; nullopt where undefined: division or modulo by 0, a shift count out
  /// of range, 64-bit overflow, or an n-derived term at n < 1.
  [[nodiscard]] std::optional<std::int64_t> evaluate(std::int64_t n, std::int64_t r) const;
  /// The readable form: "r ^ 4", "(r + n/2) % n", "n - 1 - r", "r & (r - 1)". Parentheses where precedence
  /// needs them, and around an operator operand of a bitwise or shift operator.
  [[nodiscard]] std::string to_string() const;
  /// Number of nodes (terminals and operators).
  [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }

  friend bool operator==(const Expression&, const Expression&) = default;

  /// One node; children are indices of earlier nodes (post-order, the root last).
  struct Node {
    Op op = Op::Constant;       ///< kind
    std::int64_t constant = 0;  ///< value of an Op::Constant, 0 otherwise
    std::int32_t lhs = -1;      ///< index of the left operand (operators), -1 for terminals
    std::int32_t rhs = -1;      ///< index of the right operand (operators), -1 for terminals
    friend bool operator==(const Node&, const Node&) = default;
  };
  /// The nodes in post-order (the root is last).
  [[nodiscard]] std::span<const Node> nodes() const noexcept { return nodes_; }

 private:
  explicit Expression(std::vector<Node> nodes) : nodes_(std::move(nodes)) {}
  std::vector<Node> nodes_;
};

/// One observed value of a rank-dependent quantity.
struct RankSample {
  std::int64_t n = 0;      ///< process count
  std::int64_t r = 0;      ///< rank
  std::int64_t value = 0;  ///< the quantity at rank r of the run at n
};

/// Limits and vocabulary of find_expression().
struct SearchOptions {
  /// Largest expression tried, in nodes (7 reaches (r + n/2) % n; sizes are odd).
  int max_size = 7;
  /// Integer literals offered as terminals (a negative one is rarely needed: n - 1 is found as such).
  std::vector<std::int64_t> constants{0, 1, 2, 3, 4};
  /// Offer floor(sqrt(n)), floor(log2(n)) and the dims2(n) sides as terminals.
  bool n_terms = true;
  /// Distinct sub-expressions kept for building larger ones (memory: about 8 bytes per sample used each).
  std::size_t max_stored = 150000;
  /// Candidate expressions examined, in total, before giving up. A count, not a time, so that the same samples
  /// give the same answer on a loaded machine; 2*10^7 take about half a second on one core of a 2-core VM.
  std::size_t max_candidates = 20000000;
};

/// What a search did (optional output of find_expression()).
struct SearchStats {
  std::size_t candidates = 0;     ///< candidate expressions examined
  bool budget_exhausted = false;  ///< it stopped on max_candidates before trying every expression of max_size
};

/// The smallest expression (fewest nodes; ties broken by a fixed enumeration order) whose value equals every
/// sample's value, or nullopt when none exists within the options' limits. Samples with equal (n, r) and different
/// values give nullopt.
/// @throws p3s::ModelError when there are no samples.
[[nodiscard]] std::optional<Expression> find_expression(std::span<const RankSample> samples,
                                                        const SearchOptions& options = {},
                                                        SearchStats* stats = nullptr);

/// Serialised as its readable string.
void to_json(nlohmann::json& j, const Expression& expression);
/// Parses the string. @throws p3s::InputError when it is not a string or does not parse.
void from_json(const nlohmann::json& j, Expression& expression);

}  // namespace p3s::modeler
