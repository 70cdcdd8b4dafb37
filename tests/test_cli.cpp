// Argument parsing: good input is taken, bad input gets a message that names it.
#include <string>
#include <vector>

#include "check.h"
#include "common/cli.h"

namespace {
std::string parse(std::vector<const char*> args, Options& o) {
    args.insert(args.begin(), "stage");
    return parse_args(int(args.size()), args.data(), o);
}
bool fails_with(std::vector<const char*> args, const std::string& part) {
    Options o;
    std::string err = parse(args, o);
    return !err.empty() && err.find(part) != std::string::npos;
}
}  // namespace

int main() {
    Options o;
    CHECK(parse({"--n", "3,33,512", "--reps=7", "--warmup", "0", "--seed", "99", "--json", "x.json", "--check-only"}, o)
              .empty());
    CHECK((o.sizes == std::vector<unsigned>{3, 33, 512}));
    CHECK(o.reps == 7 && o.warmup == 0 && o.seed == 99 && o.json_path == "x.json" && o.check_only && !o.as_test);
    Options d;
    CHECK(parse({}, d).empty() && d.sizes == std::vector<unsigned>{256} && d.reps > 1 && !d.check_only);
    Options h;
    CHECK(parse({"--help"}, h).empty() && h.help);
    Options n;
    CHECK(parse({"--n=1625"}, n).empty() && n.sizes == std::vector<unsigned>{1625});

    CHECK(fails_with({"--n", "2"}, "too small"));
    CHECK(fails_with({"--n", "1626"}, "too large"));
    CHECK(fails_with({"--n", "abc"}, "'abc'"));
    CHECK(fails_with({"--n", "3,,5"}, "grid sizes"));
    CHECK(fails_with({"--n", "5,"}, "grid sizes"));
    CHECK(fails_with({"--n", "-4"}, "grid sizes"));
    CHECK(fails_with({"--n"}, "needs a value"));
    CHECK(fails_with({"--reps", "0"}, "--reps"));
    CHECK(fails_with({"--reps", "1.5"}, "whole number"));
    CHECK(fails_with({"--size", "5"}, "unknown option '--size'"));
    CHECK(fails_with({"extra"}, "unknown option 'extra'"));
    CHECK(fails_with({"--check-only=yes"}, "takes no value"));
    Options t;
    CHECK(parse({"--time-only", "--n", "1024"}, t).empty() && t.time_only && !t.check_only);
    CHECK(fails_with({"--time-only", "--check-only"}, "exclude each other"));
    CHECK(usage("stage").find("--n") != std::string::npos);
    return test_exit_code();
}
