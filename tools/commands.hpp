#pragma once
/// The troupe subcommands; each returns the exit code and throws Exception / usage_error.
namespace troupe::cli {

int cmd_devices(int argc, char** argv);
int cmd_query(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_worker(int argc, char** argv);
int cmd_convert(int argc, char** argv);

} // namespace troupe::cli
