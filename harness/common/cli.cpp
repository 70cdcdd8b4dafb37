#include "common/cli.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

bool parse_whole(const std::string& text, unsigned long long& value) {
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    return ec == std::errc() && ptr == end && !text.empty();
}

bool parse_real(const std::string& text, double& value) {
    if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
    char* end = nullptr;
    value = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size() && std::isfinite(value);
}

namespace {
const char* const kCommonValueOptions[] = {"--n", "--reps", "--warmup", "--seed", "--json"};
}  // namespace

std::string split_args(int argc, const char* const* argv, const std::vector<ProgramOption>& own, const TakeOption& take,
                       std::vector<const char*>& rest) {
    rest.push_back(argv[0]);
    for (int a = 1; a < argc; ++a) {
        std::string arg = argv[a], value;
        size_t eq = arg.find('=');
        bool inline_value = arg.rfind("--", 0) == 0 && eq != std::string::npos;
        std::string name = inline_value ? arg.substr(0, eq) : arg;
        const ProgramOption* option = nullptr;
        for (const ProgramOption& o : own)
            if (name == o.name) option = &o;
        if (option == nullptr) {
            rest.push_back(argv[a]);
            // A common option's value stays with it, even when it looks like one of ours.
            for (const char* common : kCommonValueOptions)
                if (!inline_value && name == common && a + 1 < argc) rest.push_back(argv[++a]);
            continue;
        }
        if (option->takes_value) {
            if (inline_value) value = arg.substr(eq + 1);
            else if (a + 1 < argc) value = argv[++a];
            else return name + " needs a value";
        } else if (inline_value) {
            return name + " takes no value";
        }
        if (std::string err = take(name, value); !err.empty()) return err;
    }
    return "";
}

std::string parse_size_list(const std::string& text, unsigned long long max_n, const std::string& why_max,
                            std::vector<unsigned>& sizes) {
    const std::string malformed = "--n expects grid sizes like 256 or 3,33,512, got '" + text + "'";
    sizes.clear();
    std::stringstream list(text);
    std::string item;
    while (std::getline(list, item, ',')) {
        unsigned long long n;
        if (!parse_whole(item, n)) return malformed;
        if (n < kMinN) return "--n " + item + " is too small: a grid needs N >= 3 to have an interior cell";
        if (n > max_n) return "--n " + item + " is too large: " + why_max + " (N <= " + std::to_string(max_n) + ")";
        sizes.push_back(unsigned(n));
    }
    if (sizes.empty() || text.back() == ',') return malformed;
    return "";
}

std::string parse_args(int argc, const char* const* argv, Options& o) {
    for (int a = 1; a < argc; ++a) {
        std::string arg = argv[a], value;
        bool has_value = false;
        if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            has_value = true;
        }
        auto take_value = [&](std::string& out) -> bool {
            if (has_value) { out = value; return true; }
            if (a + 1 >= argc) return false;
            out = argv[++a];
            return true;
        };
        auto flag = [&](bool& b) -> std::string {
            if (has_value) return arg + " takes no value";
            b = true;
            return "";
        };
        std::string text, err;
        unsigned long long n;
        if (arg == "--help" || arg == "-h") err = flag(o.help);
        else if (arg == "--check-only") err = flag(o.check_only);
        else if (arg == "--time-only") err = flag(o.time_only);
        else if (arg == "--as-test") err = flag(o.as_test);
        else if (arg == "--n" || arg == "--reps" || arg == "--warmup" || arg == "--seed" || arg == "--json") {
            if (!take_value(text)) return arg + " needs a value";
            if (arg == "--n")
                err = parse_size_list(text, kMaxN, "the kernels index with 32-bit unsigned arithmetic, so N³ must be "
                                      "below 2^32", o.sizes);
            else if (arg == "--json") o.json_path = text;
            else if (!parse_whole(text, n))
                err = arg + (arg == "--reps" ? " expects a positive whole number, got '"
                                             : " expects a whole number (0 or more), got '") + text + "'";
            else if (arg == "--seed") o.seed = n;
            else if (arg == "--reps" && (n < 1 || n > 100000)) err = "--reps must be between 1 and 100000";
            else if (arg == "--warmup" && n > 100000) err = "--warmup must be at most 100000";
            else (arg == "--reps" ? o.reps : o.warmup) = int(n);
        } else
            err = "unknown option '" + std::string(argv[a]) + "'";
        if (!err.empty()) return err;
    }
    if (o.check_only && o.time_only) return "--check-only and --time-only exclude each other";
    return "";
}

std::string usage(const std::string& program) {
    return "usage: " + program + " [options]\n"
           "Runs this stage's 3D 7-point stencil sweep on the GPU, checks it against a CPU reference\n"
           "(float64) and reports time, bandwidth and the textbook OP/B.\n\n"
           "  --n N[,N...]     grid sizes (N×N×N floats), 3 <= N <= 1625   [256]\n"
           "  --reps R         timed repetitions; the median is reported     [50]\n"
           "  --warmup W       untimed runs before timing                   [5]\n"
           "  --seed S         seed for the random input and coefficients   [8]\n"
           "  --json FILE      append one JSON record per size to FILE\n"
           "  --check-only     verify only, do not time\n"
           "  --time-only      time only, do not verify: the input is random numbers made on the GPU\n"
           "                   and the CPU reference is skipped (fast at large N; the check says '-')\n"
           "  --as-test        exit 77 (skipped) without a GPU or when the exercise is not attempted\n"
           "  --help           this text\n\n"
           "exit codes: 0 passed, 1 wrong result or CUDA error, 2 bad arguments, 3 no usable GPU or not\n"
           "enough memory, 77 skipped (with --as-test) or exercise not attempted\n";
}
