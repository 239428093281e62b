// SPDX-License-Identifier: BSD-3-Clause
// Integer expressions in (r, n): evaluation, printing, parsing, and the bottom-up search of find_expression().
//
// Search. Expressions are enumerated bottom-up by size (number of nodes; every operator is binary, so sizes are
// 1, 3, 5, ...): the terminals first, then every `lhs op rhs` whose sizes add up to the current size. Each
// expression is represented by its vector of values on the samples, and only the first (smallest) expression with a
// given vector is kept ("observational equivalence", as in enumerative program synthesis such as Transit and
// EUSolver): expressions that agree on every sample are interchangeable as sub-expressions, so the kept set stays
// small. Expressions undefined on some sample are dropped, since undefinedness propagates upwards. The first
// expression whose vector equals the target is the answer, and it is a smallest one.
//
// Expressions of the largest size are never combined further, so they are not stored: each is compared with the
// target sample by sample and abandoned at the first mismatch, which makes the last (largest) level cheap.
//
// The value vectors use a working subset of the samples (a few dozen, spread over the (n, r) range) to bound
// memory. An answer is then checked on every sample; if it fails, the first failing sample joins the working set
// and the search starts again (counterexample-guided: the answer is still a smallest one, because any expression
// matching all samples matches the working set and would have been found no later).
#include "p3s/modeler/expression.hpp"
#include "p3s/json_text.hpp"

#include "p3s/modeler/law.hpp"

#include "p3s/error.hpp"
#include "p3s/hash.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>

namespace p3s::modeler {

namespace {

using Op = Expression::Op;
using Node = Expression::Node;

bool is_binary(Op op) { return op >= Op::Add; }

bool is_commutative(Op op) { return op == Op::Add || op == Op::Mul || op == Op::Xor || op == Op::And || op == Op::Or; }

// a op b into out; false where undefined (see Expression).
bool apply(Op op, std::int64_t a, std::int64_t b, std::int64_t& out) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  switch (op) {
    case Op::Add:
      return !__builtin_add_overflow(a, b, &out);
    case Op::Sub:
      return !__builtin_sub_overflow(a, b, &out);
    case Op::Mul:
      return !__builtin_mul_overflow(a, b, &out);
    case Op::Div:
      if (b == 0 || (a == kMin && b == -1)) {
        return false;
      }
      out = a / b;
      if (a % b != 0 && ((a < 0) != (b < 0))) {
        --out;  // C++ truncates toward 0; floor division rounds down
      }
      return true;
    case Op::Mod:
      if (b == 0 || b == kMin) {
        return false;
      }
      if (b == 1 || b == -1) {
        out = 0;  // also avoids kMin % -1, which overflows
        return true;
      }
      out = a % b;
      if (out < 0) {
        out += b < 0 ? -b : b;
      }
      return true;
    case Op::Xor:
      out = a ^ b;
      return true;
    case Op::And:
      out = a & b;
      return true;
    case Op::Or:
      out = a | b;
      return true;
    case Op::Shl:
      if (b < 0 || b > 62) {
        return false;
      }
      return !__builtin_mul_overflow(a, std::int64_t{1} << b, &out);
    case Op::Shr:
      if (b < 0 || b > 62) {
        return false;
      }
      out = a >> b;  // arithmetic shift (C++20): floor division by 2^b
      return true;
    default:
      return false;
  }
}

// The value of a terminal at (n, r); false where undefined.
bool terminal_value(Op op, std::int64_t constant, std::int64_t n, std::int64_t r, std::int64_t& out) {
  Basis basis = Basis::One;
  switch (op) {
    case Op::R:
      out = r;
      return true;
    case Op::N:
      out = n;
      return true;
    case Op::Constant:
      out = constant;
      return true;
    case Op::FloorSqrtN:
      basis = Basis::FloorSqrt;
      break;
    case Op::FloorLog2N:
      basis = Basis::FloorLog2;
      break;
    case Op::Dims2Major:
      basis = Basis::Dims2Major;
      break;
    case Op::Dims2Minor:
      basis = Basis::Dims2Minor;
      break;
    default:
      return false;
  }
  const double g = basis_value(basis, static_cast<double>(n));
  if (!(g >= 0 && g < 9e15)) {  // NaN at n < 1 or beyond int for dims
    return false;
  }
  out = static_cast<std::int64_t>(g);
  return true;
}

// Spelling of the named terminals, as printed and parsed.
constexpr std::array<std::pair<Op, std::string_view>, 6> kTerminalNames{{
    {Op::FloorSqrtN, "floor(sqrt(n))"},
    {Op::FloorLog2N, "floor(log2(n))"},
    {Op::Dims2Major, "dims2(n)[0]"},
    {Op::Dims2Minor, "dims2(n)[1]"},
    {Op::R, "r"},
    {Op::N, "n"},
}};

// Binding strength, lowest first: | ^ & shifts +- */%; terminals bind tightest.
int precedence(Op op) {
  switch (op) {
    case Op::Or:
      return 0;
    case Op::Xor:
      return 1;
    case Op::And:
      return 2;
    case Op::Shl:
    case Op::Shr:
      return 3;
    case Op::Add:
    case Op::Sub:
      return 4;
    case Op::Mul:
    case Op::Div:
    case Op::Mod:
      return 5;
    default:
      return 6;
  }
}

std::string_view symbol(Op op) {
  switch (op) {
    case Op::Add:
      return "+";
    case Op::Sub:
      return "-";
    case Op::Mul:
      return "*";
    case Op::Div:
      return "/";
    case Op::Mod:
      return "%";
    case Op::Xor:
      return "^";
    case Op::And:
      return "&";
    case Op::Or:
      return "|";
    case Op::Shl:
      return "<<";
    case Op::Shr:
      return ">>";
    default:
      return "?";
  }
}

std::string print(std::span<const Node> nodes, std::int32_t index) {
  const Node& node = nodes[static_cast<std::size_t>(index)];
  if (node.op == Op::Constant) {
    return std::to_string(node.constant);
  }
  if (!is_binary(node.op)) {
    for (const auto& [op, name] : kTerminalNames) {
      if (op == node.op) {
        return std::string(name);
      }
    }
  }
  // Left-associative: a left operand needs parentheses when it binds more loosely, a right one also when it binds
  // equally ("n - 1 - r" but "n - (1 - r)"), so printing and parsing give back the same tree. For readability an
  // operand of a bitwise or shift operator is also parenthesised when it is another operator ("r & (r - 1)" rather
  // than the equivalent "r & r - 1"): few readers remember where C puts those.
  const int p = precedence(node.op);
  const auto needs_parens = [&](std::int32_t child, bool right) {
    const Op op = nodes[static_cast<std::size_t>(child)].op;
    const int q = precedence(op);
    return q < p || (right && q == p) || (p <= precedence(Op::Shl) && is_binary(op) && op != node.op);
  };
  std::string lhs = print(nodes, node.lhs);
  std::string rhs = print(nodes, node.rhs);
  if (needs_parens(node.lhs, false)) {
    lhs = "(" + lhs + ")";
  }
  if (needs_parens(node.rhs, true)) {
    rhs = "(" + rhs + ")";
  }
  // "n/2" and "2*r" read as one term; the looser operators get spaces.
  const bool tight = node.op == Op::Mul || node.op == Op::Div;
  const std::string sym(symbol(node.op));
  return lhs + (tight ? sym : " " + sym + " ") + rhs;
}

// Recursive descent over the precedence levels of precedence().
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::vector<Node> run() {
    // The search writes expressions of a few dozen characters; a longer one is damage, and its tree (as deep as it
    // is long) would be walked by recursion.
    if (text_.size() > kMostLength) {
      throw InputError("an expression of " + std::to_string(text_.size()) + " characters, more than the " +
                       std::to_string(kMostLength) + " a model's expressions have; the model file may be damaged");
    }
    parse_level(0);
    skip_spaces();
    if (pos_ != text_.size()) {
      fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    }
    return std::move(nodes_);
  }

 private:
  static constexpr std::size_t kMostLength = 1000;

  [[noreturn]] void fail(const std::string& why) const {
    const std::string shown = text_.size() > 80 ? std::string(text_.substr(0, 77)) + "..." : std::string(text_);
    throw InputError("expression '" + shown + "', position " + std::to_string(pos_) + ": " + why +
                     "; expected something like \"(r + n/2) % n\"");
  }

  void skip_spaces() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])) != 0) {
      ++pos_;
    }
  }

  bool accept(std::string_view token) {
    if (text_.substr(pos_).starts_with(token)) {
      pos_ += token.size();
      return true;
    }
    return false;
  }

  std::optional<Op> binary_operator(int level) {
    skip_spaces();
    const std::string_view rest = text_.substr(pos_);
    const auto take = [this](std::size_t length, Op op) {
      pos_ += length;
      return std::optional<Op>(op);
    };
    switch (level) {
      case 0:
        return rest.starts_with("|") ? take(1, Op::Or) : std::nullopt;
      case 1:
        return rest.starts_with("^") ? take(1, Op::Xor) : std::nullopt;
      case 2:
        return rest.starts_with("&") ? take(1, Op::And) : std::nullopt;
      case 3:
        if (rest.starts_with("<<")) {
          return take(2, Op::Shl);
        }
        return rest.starts_with(">>") ? take(2, Op::Shr) : std::nullopt;
      case 4:
        if (rest.starts_with("+")) {
          return take(1, Op::Add);
        }
        return rest.starts_with("-") ? take(1, Op::Sub) : std::nullopt;
      default:
        if (rest.starts_with("*")) {
          return take(1, Op::Mul);
        }
        if (rest.starts_with("/")) {
          return take(1, Op::Div);
        }
        return rest.starts_with("%") ? take(1, Op::Mod) : std::nullopt;
    }
  }

  std::int32_t push(Node node) {
    nodes_.push_back(node);
    return static_cast<std::int32_t>(nodes_.size() - 1);
  }

  std::int32_t parse_level(int level) {
    if (level > 5) {
      return parse_primary();
    }
    std::int32_t lhs = parse_level(level + 1);
    while (const std::optional<Op> op = binary_operator(level)) {
      const std::int32_t rhs = parse_level(level + 1);
      lhs = push(Node{*op, 0, lhs, rhs});
    }
    return lhs;
  }

  std::int32_t parse_primary() {
    skip_spaces();
    if (accept("(")) {
      const std::int32_t inner = parse_level(0);
      skip_spaces();
      if (!accept(")")) {
        fail("missing ')'");
      }
      return inner;
    }
    // An integer literal, possibly negative ("r * -1"); a '-' anywhere else is the binary operator.
    const bool negative = pos_ < text_.size() && text_[pos_] == '-';
    const std::size_t digits = pos_ + (negative ? 1 : 0);
    if (digits < text_.size() && std::isdigit(static_cast<unsigned char>(text_[digits])) != 0) {
      pos_ = digits;
      std::int64_t value = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) != 0) {
        if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, text_[pos_] - '0', &value)) {
          fail("integer literal out of range");
        }
        ++pos_;
      }
      return push(Node{Op::Constant, negative ? -value : value, -1, -1});
    }
    for (const auto& [op, name] : kTerminalNames) {
      if (text_.substr(pos_).starts_with(name)) {
        const std::size_t end = pos_ + name.size();
        // "r" and "n" must not be the start of a longer word.
        if (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) != 0 || text_[end] == '_')) {
          continue;
        }
        pos_ = end;
        return push(Node{op, 0, -1, -1});
      }
    }
    fail(pos_ < text_.size() ? "unexpected '" + std::string(1, text_[pos_]) + "'" : "unexpected end");
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::vector<Node> nodes_;
};

// ---------------------------------------------------------------------------------------------------------------
// Search

struct Limits {
  std::size_t candidates_left = 0;
  bool exhausted = false;  // a limit was hit
};

// One bottom-up enumeration over a fixed working set of samples (see the top of the file).
class Enumerator {
 public:
  Enumerator(std::span<const RankSample> working, const SearchOptions& options, Limits& limits)
      : samples_(working), options_(options), limits_(limits), m_(working.size()), scratch_(working.size()) {
    for (const RankSample& s : working) {
      target_.push_back(s.value);
    }
    std::size_t capacity = 16;
    while (capacity < 2 * options.max_stored + 2) {
      capacity *= 2;
    }
    slots_.assign(capacity, 0);
  }

  // The smallest expression matching the working set, or nullopt (none within max_size, or a limit was hit).
  std::optional<Expression> run() {
    by_size_.assign(static_cast<std::size_t>(std::max(options_.max_size, 1)) + 1, {});
    if (auto found = terminals()) {
      return found;
    }
    for (int size = 3; size <= options_.max_size; size += 2) {
      const bool store = size + 2 <= options_.max_size;
      for (const Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Mod, Op::Xor, Op::And, Op::Or, Op::Shl, Op::Shr}) {
        // Larger left operand first, so that "n - 1 - r" is met before "n - (1 + r)".
        for (int lsize = size - 2; lsize >= 1; lsize -= 2) {
          const int rsize = size - 1 - lsize;
          // A commutative operator needs each unordered pair once.
          if (is_commutative(op) && lsize < rsize) {
            continue;
          }
          if (auto found = combine(op, lsize, rsize, store)) {
            return found;
          }
          if (limits_.exhausted) {
            return std::nullopt;
          }
        }
      }
    }
    return std::nullopt;
  }

 private:
  struct Entry {
    Op op;
    std::int64_t constant;
    std::uint32_t lhs;
    std::uint32_t rhs;
  };

  std::span<const std::int64_t> values(std::uint32_t entry) const {
    return std::span<const std::int64_t>(values_).subspan(static_cast<std::size_t>(entry) * m_, m_);
  }

  std::optional<Expression> terminals() {
    std::vector<Entry> leaves{{Op::R, 0, 0, 0}, {Op::N, 0, 0, 0}};
    for (const std::int64_t c : options_.constants) {
      leaves.push_back({Op::Constant, c, 0, 0});
    }
    if (options_.n_terms) {
      for (const Op op : {Op::FloorSqrtN, Op::FloorLog2N, Op::Dims2Major, Op::Dims2Minor}) {
        leaves.push_back({op, 0, 0, 0});
      }
    }
    for (const Entry& leaf : leaves) {
      bool defined = true;
      for (std::size_t i = 0; i < m_ && defined; ++i) {
        defined = terminal_value(leaf.op, leaf.constant, samples_[i].n, samples_[i].r, scratch_[i]);
      }
      if (!defined) {
        continue;
      }
      if (scratch_ == target_) {
        return Expression::terminal(leaf.op, leaf.constant);
      }
      keep(leaf, 1);
    }
    return std::nullopt;
  }

  // Every `lhs op rhs` with operands of the given sizes. Returns the first that matches the target.
  std::optional<Expression> combine(Op op, int lsize, int rsize, bool store) {
    const std::vector<std::uint32_t>& lefts = by_size_[static_cast<std::size_t>(lsize)];
    const std::vector<std::uint32_t>& rights = by_size_[static_cast<std::size_t>(rsize)];
    const bool same_level = lsize == rsize;
    for (std::size_t li = 0; li < lefts.size(); ++li) {
      // A commutative operator over one level: pairs with li <= ri only.
      const std::size_t first = is_commutative(op) && same_level ? li : 0;
      if (!charge(rights.size() - std::min(first, rights.size()))) {
        return std::nullopt;
      }
      for (std::size_t ri = first; ri < rights.size(); ++ri) {
        // Pointers, not spans kept across iterations: keep() may reallocate values_.
        const std::int64_t* a = values_.data() + static_cast<std::size_t>(lefts[li]) * m_;
        const std::int64_t* b = values_.data() + static_cast<std::size_t>(rights[ri]) * m_;
        // The smaller operand on the left of a commutative operator reads better: "r & (r - 1)", "r + n/2".
        const bool swap = is_commutative(op) && lsize > rsize;
        const std::uint32_t lhs = swap ? rights[ri] : lefts[li];
        const std::uint32_t rhs = swap ? lefts[li] : rights[ri];
        if (!store) {
          // Never combined further: only the comparison with the target matters, and most fail at sample 0.
          std::size_t i = 0;
          std::int64_t v = 0;
          while (i < m_ && apply(op, a[i], b[i], v) && v == target_[i]) {
            ++i;
          }
          if (i == m_) {
            return build(op, lhs, rhs);
          }
          continue;
        }
        bool defined = true;
        for (std::size_t i = 0; i < m_ && defined; ++i) {
          defined = apply(op, a[i], b[i], scratch_[i]);
        }
        if (!defined) {
          continue;
        }
        if (scratch_ == target_) {
          return build(op, lhs, rhs);
        }
        keep(Entry{op, 0, lhs, rhs}, lsize + rsize + 1);
      }
    }
    return std::nullopt;
  }

  // Accounts for `count` candidates; false (and exhausted) when a limit is hit.
  bool charge(std::size_t count) {
    if (count > limits_.candidates_left) {
      limits_.exhausted = true;
      return false;
    }
    limits_.candidates_left -= count;
    return true;
  }

  std::uint64_t hash(std::span<const std::int64_t> v) const {
    std::uint64_t h = kGoldenGamma;
    for (const std::int64_t x : v) {
      h ^= static_cast<std::uint64_t>(x) + kGoldenGamma + (h << 6) + (h >> 2);
    }
    // The final mix, so that the low bits used as the slot index depend on all bits.
    return mix_bits(h);
  }

  // Stores scratch_ as the values of `entry` unless an earlier expression has the same values (or the store is full).
  void keep(const Entry& entry, int size) {
    if (entries_.size() >= options_.max_stored) {
      return;
    }
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t slot = hash(scratch_) & mask;; slot = (slot + 1) & mask) {
      if (slots_[slot] == 0) {
        slots_[slot] = static_cast<std::uint32_t>(entries_.size() + 1);
        break;
      }
      const std::span<const std::int64_t> other = values(slots_[slot] - 1);
      if (std::equal(other.begin(), other.end(), scratch_.begin())) {
        return;  // observationally equivalent to a smaller (or earlier) expression
      }
    }
    by_size_[static_cast<std::size_t>(size)].push_back(static_cast<std::uint32_t>(entries_.size()));
    entries_.push_back(entry);
    values_.insert(values_.end(), scratch_.begin(), scratch_.end());
  }

  Expression expression(std::uint32_t index) const {
    const Entry& e = entries_[index];
    if (!is_binary(e.op)) {
      return Expression::terminal(e.op, e.constant);
    }
    return Expression::binary(e.op, expression(e.lhs), expression(e.rhs));
  }

  Expression build(Op op, std::uint32_t lhs, std::uint32_t rhs) const {
    return Expression::binary(op, expression(lhs), expression(rhs));
  }

  std::span<const RankSample> samples_;
  const SearchOptions& options_;
  Limits& limits_;
  std::size_t m_;
  std::vector<std::int64_t> target_;
  std::vector<std::int64_t> scratch_;
  std::vector<Entry> entries_;
  std::vector<std::int64_t> values_;                 // m_ values per entry
  std::vector<std::vector<std::uint32_t>> by_size_;  // entries by expression size
  std::vector<std::uint32_t> slots_;                 // hash table of entry index + 1 (0: empty)
};

// Initial working set: this many samples, spread evenly over the samples sorted by (n, r).
constexpr std::size_t kInitialWorkingSet = 24;

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Expression

Expression::Expression() : nodes_{Node{Op::Constant, 0, -1, -1}} {}

Expression Expression::terminal(Op op, std::int64_t constant) {
  if (is_binary(op)) {
    throw InputError("Expression::terminal: operator '" + std::string(symbol(op)) + "' is not a terminal");
  }
  return Expression({Node{op, op == Op::Constant ? constant : 0, -1, -1}});
}

Expression Expression::binary(Op op, const Expression& lhs, const Expression& rhs) {
  if (!is_binary(op)) {
    throw InputError("Expression::binary: the node kind is a terminal, not an operator");
  }
  std::vector<Node> nodes = lhs.nodes_;
  const auto offset = static_cast<std::int32_t>(lhs.nodes_.size());
  for (Node node : rhs.nodes_) {
    if (is_binary(node.op)) {
      node.lhs += offset;
      node.rhs += offset;
    }
    nodes.push_back(node);
  }
  nodes.push_back(Node{op, 0, offset - 1, static_cast<std::int32_t>(nodes.size()) - 1});
  return Expression(std::move(nodes));
}

Expression Expression::parse(std::string_view text) { return Expression(Parser(text).run()); }

std::optional<std::int64_t> Expression::evaluate(std::int64_t n, std::int64_t r) const {
  std::vector<std::int64_t> value(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const Node& node = nodes_[i];
    const bool ok = is_binary(node.op) ? apply(node.op, value[static_cast<std::size_t>(node.lhs)],
                                               value[static_cast<std::size_t>(node.rhs)], value[i])
                                       : terminal_value(node.op, node.constant, n, r, value[i]);
    if (!ok) {
      return std::nullopt;
    }
  }
  return value.back();
}

std::string Expression::to_string() const { return print(nodes_, static_cast<std::int32_t>(nodes_.size()) - 1); }

// ---------------------------------------------------------------------------------------------------------------
// Search

std::optional<Expression> find_expression(std::span<const RankSample> samples, const SearchOptions& options,
                                          SearchStats* stats) {
  if (samples.empty()) {
    throw ModelError("expression search: no samples; give the quantity's value at one rank at least");
  }
  std::vector<RankSample> all(samples.begin(), samples.end());
  std::sort(all.begin(), all.end(),
            [](const RankSample& x, const RankSample& y) { return x.n != y.n ? x.n < y.n : x.r < y.r; });
  std::vector<RankSample> distinct;
  for (const RankSample& s : all) {
    if (!distinct.empty() && distinct.back().n == s.n && distinct.back().r == s.r) {
      if (distinct.back().value != s.value) {
        return std::nullopt;  // two values at one (n, r): no function of (n, r) fits
      }
      continue;
    }
    distinct.push_back(s);
  }

  std::vector<RankSample> working;
  const std::size_t initial = std::min(distinct.size(), kInitialWorkingSet);
  for (std::size_t i = 0; i < initial; ++i) {
    working.push_back(distinct[i * distinct.size() / initial]);
  }
  Limits limits{options.max_candidates, false};
  const auto report = [&] {
    if (stats != nullptr) *stats = {options.max_candidates - limits.candidates_left, limits.exhausted};
  };
  while (true) {
    std::optional<Expression> found = Enumerator(working, options, limits).run();
    if (!found) {
      report();
      return std::nullopt;
    }
    const auto miss = std::find_if(distinct.begin(), distinct.end(),
                                   [&](const RankSample& s) { return found->evaluate(s.n, s.r) != s.value; });
    if (miss == distinct.end()) {
      report();
      return found;
    }
    // Right on the working set, wrong elsewhere: learn from the counterexample and search again.
    working.push_back(*miss);
  }
}

void to_json(nlohmann::json& j, const Expression& expression) { j = expression.to_string(); }

void from_json(const nlohmann::json& j, Expression& expression) {
  if (!j.is_string()) {
    throw InputError("expression JSON: expected a string such as \"(r + n/2) % n\", got " + json_excerpt(j));
  }
  expression = Expression::parse(j.get<std::string>());
}

}  // namespace p3s::modeler
