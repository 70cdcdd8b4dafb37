#pragma once
// Command-line options shared by every stage's program.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

// The book's kernels index with 32-bit unsigned arithmetic (i*N*N + j*N + k), so N³ must stay
// below 2^32: N <= 1625. A grid that large needs 2 × 17.2 GB on the GPU.
constexpr unsigned kMinN = 3;
constexpr unsigned kMaxN = 1625;

struct Options {
    std::vector<unsigned> sizes = {256};
    int reps = 50;
    int warmup = 5;
    uint64_t seed = 8;
    std::string json_path;    // append one JSON record per run to this file
    bool check_only = false;  // verify, do not time
    bool time_only = false;   // time, do not verify: random input made on the GPU, no CPU reference
    bool as_test = false;     // exit 77 (skip) when there is no GPU or the exercise is not attempted
    bool help = false;
};

// Fills `o` from argv. Returns "" on success, else a message naming the bad argument.
std::string parse_args(int argc, const char* const* argv, Options& o);

// Parses the value of --n, a list like "3,33,512", into `sizes`: each at least kMinN and at
// most `max_n` (`why_max` says why, for the message). Returns "" or a message.
std::string parse_size_list(const std::string& text, unsigned long long max_n, const std::string& why_max,
                            std::vector<unsigned>& sizes);
std::string usage(const std::string& program);

// Options that one program adds to the common ones (stage 01's --study-only, the heat options).
struct ProgramOption {
    const char* name;  // "--bc"
    bool takes_value;
};
using TakeOption = std::function<std::string(const std::string& name, const std::string& value)>;
// Takes the program's own options out of argv, as "--name value" or "--name=value", and hands
// each to `take` (value "" for a flag); the other arguments stay in `rest`, in order, for
// parse_args (a common option keeps its value with it). Returns "" or the first message.
std::string split_args(int argc, const char* const* argv, const std::vector<ProgramOption>& own, const TakeOption& take,
                       std::vector<const char*>& rest);
// Parses a whole number or a finite real number; false if `text` is anything else.
bool parse_whole(const std::string& text, unsigned long long& value);
bool parse_real(const std::string& text, double& value);
