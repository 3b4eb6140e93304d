#pragma once
// Folders that mase writes whole (an emitted hardware project and the tools' work folders in it).
//
// mase never deletes or overwrites what it did not write. A project folder may be new, empty, or
// a project that mase wrote before, which it recognises by the marker file `.mase-project`: the
// marker names the tool version and the project's kind and lists every file, folder and work
// folder mase wrote there (the manifest). Anything else is refused before anything is touched.
// Replacing a project removes only what its manifest lists; files a user added beside them
// survive. A listed path is only ever removed through real folders of the project, never through
// a symbolic link (a user who links rtl/ to their sources keeps them).
//
// The new project is written into a staging folder inside the target and then moved into place
// file by file. The marker always lists the staging folder and the union of the old and new
// entries while the swap is under way, so a process killed at any point leaves a folder that the
// next emission recognises and cleans, never a folder that looks foreign.

#include <mase/core/error.hpp>
#include <mase/core/temp_file.hpp>
#include <mase/version.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <stdlib.h>  // mkdtemp

#include <fmt/core.h>

namespace mase {

inline constexpr std::string_view project_marker_name = ".mase-project";

// What mase wrote in a project folder, as paths relative to it with '/' separators.
struct project_manifest {
  std::string kind{};                    // e.g. "verilog"
  std::set<std::string> files{};         // replaced or removed with the project
  std::set<std::string> folders{};       // created by mase; removed once they are empty
  std::set<std::string> work_folders{};  // mase's scratch (simulation, reports): removed whole
  friend bool operator==(const project_manifest&, const project_manifest&) = default;
};

inline std::optional<project_manifest> read_project_manifest(const std::filesystem::path& folder);

namespace project_detail {

namespace fs = std::filesystem;

// A manifest entry must stay inside the folder: relative, no "." or ".." component, not empty.
inline bool is_safe_entry(std::string_view entry) {
  if (entry.empty() || entry.front() == '/' || entry.back() == '/') return false;
  std::size_t begin = 0;
  while (begin <= entry.size()) {
    const std::size_t end = std::min(entry.find('/', begin), entry.size());
    const std::string_view part = entry.substr(begin, end - begin);
    if (part.empty() || part == "." || part == "..") return false;
    begin = end + 1;
  }
  return entry.find('\0') == std::string_view::npos && entry.find('\n') == std::string_view::npos;
}

// Whether every folder between `root` and `root/entry` that exists is a real folder, not a
// symbolic link or a file (a missing one will be created as a real folder).
inline bool reached_without_links(const fs::path& root, const std::string& entry) {
  fs::path at = root;
  const fs::path relative(entry);
  for (auto part = relative.begin(); part != relative.end(); ++part) {
    if (std::next(part) == relative.end()) return true;
    at /= *part;
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(at, ec);
    if (!fs::exists(status)) return true;
    if (!fs::is_directory(status)) return false;
  }
  return true;
}

inline std::string manifest_text(const project_manifest& m) {
  std::string text = fmt::format("mase-project 1\nmase {}\nkind {}\n", mase::version, m.kind);
  text += "# What mase wrote here: mase replaces or removes these entries and nothing else.\n";
  for (const std::string& f : m.files) text += fmt::format("file {}\n", f);
  for (const std::string& f : m.folders) text += fmt::format("folder {}\n", f);
  for (const std::string& f : m.work_folders) text += fmt::format("work {}\n", f);
  return text;
}

inline project_manifest merged(const project_manifest& a, const project_manifest& b) {
  project_manifest m = a;
  m.files.insert(b.files.begin(), b.files.end());
  m.folders.insert(b.folders.begin(), b.folders.end());
  m.work_folders.insert(b.work_folders.begin(), b.work_folders.end());
  return m;
}

inline std::string relative_entry(const fs::path& path) { return path.generic_string(); }

// Up to three of a folder's entries, to name in a refusal.
inline std::string some_entries(const fs::path& folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) text += fmt::format("{}{}", i ? ", " : "", names[i]);
  if (names.size() > 3) text += fmt::format(" and {} more", names.size() - 3);
  return text;
}

// The rules' first half, shared by project_writer and output_folder: `folder` resolved and, if it
// exists, a folder that is empty or holds mase's output of `kind`; nothing is touched. `noun`
// ("project", "folder") names the output in messages.
struct folder_check {
  fs::path absolute;                          // as given, made absolute
  fs::path root;                              // canonical; empty when the folder does not exist yet
  std::optional<project_manifest> previous{};  // what mase wrote there before
};

inline folder_check check_output_folder(const fs::path& folder, const std::string& kind, const std::string& who,
                                        std::string_view noun) {
  if (folder.empty()) throw error(fmt::format("{}: give the output folder", who));
  folder_check c;
  std::error_code ec;
  c.absolute = fs::absolute(folder, ec);
  if (ec) throw error(fmt::format("{}: cannot resolve {}: {}", who, folder.string(), ec.message()));
  const fs::file_status status = fs::status(c.absolute, ec);  // follows a link to a folder
  if (!fs::exists(status)) return c;
  if (!fs::is_directory(status))
    throw error(fmt::format("{}: {} exists and is not a folder; give a new or empty folder", who, folder.string()));
  c.root = fs::canonical(c.absolute, ec);
  if (ec) throw error(fmt::format("{}: cannot resolve {}: {}", who, folder.string(), ec.message()));
  c.previous = read_project_manifest(c.root);
  if (c.previous && c.previous->kind != kind)
    throw error(fmt::format("{}: {} holds a mase {} project, not a {} {}; give another folder", who, folder.string(),
                            c.previous->kind, kind, noun));
  if (!c.previous && !fs::is_empty(c.root, ec))
    throw error(fmt::format("{}: {} is not empty and is not a {} mase wrote (it holds {}); mase writes only into a new "
                            "or empty folder, or into one it wrote before (marked by its {} file). Nothing was "
                            "changed; give a new or empty folder",
                            who, folder.string(), noun, some_entries(c.root), project_marker_name));
  return c;
}

}  // namespace project_detail

// The manifest of the project in `folder`, or nothing when the folder holds no marker. A marker
// that cannot be read, or that lists a path outside the folder, is an error (nothing is touched).
inline std::optional<project_manifest> read_project_manifest(const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  const fs::path marker = folder / project_marker_name;
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(marker, ec);
  if (!fs::exists(status)) return std::nullopt;
  const auto bad = [&](std::string_view why) {
    return error(fmt::format("{}: {}; this marker is how mase recognises a folder it wrote. If the folder is not a "
                             "mase project, choose another output folder",
                             marker.string(), why));
  };
  if (!fs::is_regular_file(status)) throw bad("it is not a regular file");
  std::ifstream in(marker, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line) || line != "mase-project 1")
    throw bad("its first line is not \"mase-project 1\"");
  project_manifest m;
  while (std::getline(in, line)) {
    if (line.empty() || line.front() == '#' || line.rfind("mase ", 0) == 0) continue;
    const std::size_t space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string value = space == std::string::npos ? std::string() : line.substr(space + 1);
    if (key == "kind") {
      m.kind = value;
      continue;
    }
    std::set<std::string>* list = key == "file" ? &m.files : key == "folder" ? &m.folders
                                  : key == "work"  ? &m.work_folders : nullptr;
    if (list == nullptr) throw bad(fmt::format("it has an unknown line \"{}\"", line));
    if (!project_detail::is_safe_entry(value))
      throw bad(fmt::format("it lists \"{}\", which is not a path inside the folder", value));
    list->insert(value);
  }
  if (m.kind.empty()) throw bad("it names no kind of project");
  return m;
}

// Throws unless `folder` holds a mase project of `kind` (the tools run only in such folders,
// writing only into the work folders its manifest lists).
inline void require_project(const std::filesystem::path& folder, std::string_view kind, std::string_view who) {
  const std::optional<project_manifest> m = read_project_manifest(folder);
  if (!m || m->kind != kind)
    throw error(fmt::format("{}: {} is not a {} project written by mase (it has no {} marker naming that kind); "
                            "emit the project there first",
                            who, folder.string(), kind, project_marker_name));
}

// Writes a whole project into a folder under the rules above:
//   project_writer out(dir, "verilog", "emit_verilog");   // refuses a foreign folder
//   … write files under out.staging() …
//   out.publish(manifest);                                 // the swap; without it, nothing changes
class project_writer {
public:
  project_writer(const std::filesystem::path& folder, std::string kind, std::string who)
      : kind_(std::move(kind)), who_(std::move(who)) {
    namespace fs = std::filesystem;
    project_detail::folder_check checked = project_detail::check_output_folder(folder, kind_, who_, "project");
    const fs::path& absolute = checked.absolute;
    std::error_code ec;
    if (!checked.root.empty()) {
      root_ = checked.root;
      previous_ = std::move(checked.previous);
    } else {
      // Create the missing folders, remembering them so that a failure removes exactly those.
      fs::path existing = absolute.lexically_normal();
      if (!existing.has_filename()) existing = existing.parent_path();
      std::vector<fs::path> missing;
      while (!fs::exists(fs::symlink_status(existing, ec))) {
        missing.push_back(existing);
        existing = existing.parent_path();
      }
      for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
        if (!fs::create_directory(*it, ec) && ec)
          throw error(fmt::format("{}: cannot create the folder {}: {}", who_, it->string(), ec.message()));
        created_.push_back(*it);
      }
      root_ = fs::canonical(absolute, ec);
      if (ec) throw error(fmt::format("{}: cannot resolve {}: {}", who_, folder.string(), ec.message()));
    }
    // The staging folder, listed in the marker before anything is written into it.
    std::string pattern = (root_ / ".mase-staging-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      const std::string why = std::system_category().message(errno);
      undo_created();
      throw error(fmt::format("{}: cannot write into {}: {}", who_, folder.string(), why));
    }
    staging_ = pattern;
    staging_entry_ = staging_.filename().string();
    try {
      project_manifest in_progress = previous_.value_or(project_manifest{.kind = kind_});
      in_progress.work_folders.insert(staging_entry_);
      write_marker(in_progress);
    } catch (...) {
      fs::remove_all(staging_, ec);
      undo_created();
      throw;
    }
  }

  project_writer(const project_writer&) = delete;
  project_writer& operator=(const project_writer&) = delete;

  // Without publish(), the folder returns to what it was (the staging folder removed, the old
  // marker restored, folders this writer created removed).
  ~project_writer() {
    if (published_) return;
    std::error_code ec;
    std::filesystem::remove_all(staging_, ec);
    try {
      if (previous_) write_marker(*previous_);
      else std::filesystem::remove(root_ / project_marker_name, ec);
    } catch (...) {  // a destructor must not throw; the marker still lists only mase's entries
    }
    undo_created();
  }

  const std::filesystem::path& folder() const noexcept { return root_; }
  const std::filesystem::path& staging() const noexcept { return staging_; }

  // Moves every file under staging() into the folder, replacing the previous project (only what
  // its manifest lists), and records `work_folders` as mase's. Returns the final manifest.
  project_manifest publish(const std::set<std::string>& work_folders = {}) {
    namespace fs = std::filesystem;
    project_manifest next{.kind = kind_};
    next.work_folders = work_folders;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(staging_, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      const std::string entry = project_detail::relative_entry(fs::relative(it->path(), staging_));
      if (it->is_directory()) next.folders.insert(entry);
      else next.files.insert(entry);
    }
    if (ec) throw error(fmt::format("{}: cannot list {}: {}", who_, staging_.string(), ec.message()));

    const project_manifest old = previous_.value_or(project_manifest{.kind = kind_});
    // Everything that could stop the swap is checked before anything is removed.
    for (const std::string& f : next.folders) {
      const fs::file_status there = fs::symlink_status(root_ / f, ec);
      const bool own_folder = fs::is_directory(there) && old.folders.contains(f);
      const bool free = !fs::exists(there) || own_folder || (fs::is_directory(there) && fs::is_empty(root_ / f, ec));
      if (!project_detail::reached_without_links(root_, f) || !free)
        throw in_the_way(f);
    }
    for (const std::string& f : next.files) {
      const fs::file_status there = fs::symlink_status(root_ / f, ec);
      if (!project_detail::reached_without_links(root_, f) || (fs::exists(there) && !old.files.contains(f)) ||
          fs::is_directory(there))
        throw in_the_way(f);
    }

    project_manifest during = project_detail::merged(old, next);
    during.work_folders.insert(staging_entry_);
    write_marker(during);

    for (const std::string& f : old.work_folders) remove_entry(f, /*whole=*/true);
    for (const std::string& f : old.files)
      if (!next.files.contains(f)) remove_entry(f, false);
    for (const std::string& f : next.folders) {
      const fs::path p = root_ / f;
      if (fs::is_directory(fs::symlink_status(p, ec))) continue;
      fs::create_directory(p, ec);
      if (ec) throw error(fmt::format("{}: cannot create {}: {}", who_, p.string(), ec.message()));
    }
    for (const std::string& f : next.files) {
      const fs::path to = root_ / f;
      fs::rename(staging_ / f, to, ec);
      if (ec) throw error(fmt::format("{}: cannot move {} into place: {}", who_, to.string(), ec.message()));
    }
    // Old folders the new project does not use, deepest first, if nothing else lives in them.
    for (auto it = old.folders.rbegin(); it != old.folders.rend(); ++it)
      if (!next.folders.contains(*it)) remove_entry(*it, false);
    fs::remove_all(staging_, ec);
    write_marker(next);
    published_ = true;
    return next;
  }

private:
  error in_the_way(const std::string& entry) const {
    return error(fmt::format("{}: cannot place {} of the project: {} holds something mase did not write there (or a "
                             "link); nothing was changed. Move it away and emit again",
                             who_, entry, (root_ / entry).string()));
  }

  void write_marker(const project_manifest& m) const {
    write_file_atomically(root_ / project_marker_name, project_detail::manifest_text(m));
  }

  // Removes a listed entry (only through real folders; a folder only when empty unless whole).
  void remove_entry(const std::string& entry, bool whole) const {
    namespace fs = std::filesystem;
    if (!project_detail::reached_without_links(root_, entry)) return;
    const fs::path p = root_ / entry;
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(p, ec);
    if (!fs::exists(status)) return;
    if (fs::is_directory(status)) {
      if (whole) fs::remove_all(p, ec);
      else if (fs::is_empty(p, ec)) fs::remove(p, ec);
    } else {
      fs::remove(p, ec);  // a file, or a link itself (never what it points to)
    }
    if (ec) throw error(fmt::format("{}: cannot remove {} of the previous project: {}", who_, p.string(), ec.message()));
  }

  void undo_created() noexcept {
    std::error_code ec;
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) std::filesystem::remove(*it, ec);  // only if empty
    created_.clear();
  }

  std::string kind_, who_;
  std::filesystem::path root_, staging_;
  std::string staging_entry_;
  std::optional<project_manifest> previous_;
  std::vector<std::filesystem::path> created_;
  bool published_ = false;
};

// A folder that mase fills entry by entry while it runs (a search's output: its journal grows
// trial by trial, its front's files are written at the end), under the same rules as a project:
// new, empty, or one mase wrote before with the same kind; anything else is refused before
// anything is touched. Every entry is listed in the marker before it is written, so a process
// killed at any point leaves a folder the next run recognises. Only listed entries are ever
// replaced or removed; a user's file in the way of one is refused, never overwritten.
//   output_folder out(dir, "search", "mase search");
//   out.write("best.toml", text);       // atomically, listed first
//   out.remove("pareto/trial_3.toml");  // only if mase wrote it
class output_folder {
public:
  output_folder(const std::filesystem::path& folder, std::string kind, std::string who)
      : kind_(std::move(kind)), who_(std::move(who)) {
    namespace fs = std::filesystem;
    project_detail::folder_check existing = project_detail::check_output_folder(folder, kind_, who_, "folder");
    std::error_code ec;
    if (existing.root.empty()) {
      if (!fs::create_directories(existing.absolute, ec) && ec)
        throw error(fmt::format("{}: cannot create the folder {}: {}", who_, folder.string(), ec.message()));
      existing.root = fs::canonical(existing.absolute, ec);
      if (ec) throw error(fmt::format("{}: cannot resolve {}: {}", who_, folder.string(), ec.message()));
    }
    root_ = existing.root;
    manifest_ = existing.previous.value_or(project_manifest{.kind = kind_});
    write_marker();  // fails here, before anything else, in a folder mase cannot write
  }

  const std::filesystem::path& folder() const noexcept { return root_; }
  const project_manifest& manifest() const noexcept { return manifest_; }
  // Whether mase wrote `entry` here (a path relative to the folder, '/' separators).
  bool owns(const std::string& entry) const { return manifest_.files.contains(entry) || manifest_.folders.contains(entry); }

  // Lists the file `entry` as mase's and returns its path, for a writer of its own (the journal);
  // refused when something mase did not write is there.
  std::filesystem::path claim_file(const std::string& entry) {
    namespace fs = std::filesystem;
    check_entry(entry);
    std::error_code ec;
    for (fs::path parent = fs::path(entry).parent_path(); !parent.empty(); parent = parent.parent_path())
      claim_folder(parent.generic_string());
    const fs::file_status there = fs::symlink_status(root_ / entry, ec);
    if (!manifest_.files.contains(entry)) {
      if (fs::exists(there)) throw in_the_way(entry);
      manifest_.files.insert(entry);
      write_marker();
    } else if (fs::exists(there) && !fs::is_regular_file(there)) {
      throw in_the_way(entry);
    }
    return root_ / entry;
  }

  // Lists the folder `entry` as mase's and creates it (a folder already there is used as it is:
  // mase removes from it only what it lists).
  std::filesystem::path claim_folder(const std::string& entry) {
    namespace fs = std::filesystem;
    check_entry(entry);
    const fs::path p = root_ / entry;
    std::error_code ec;
    const fs::file_status there = fs::symlink_status(p, ec);
    if (fs::exists(there) && !fs::is_directory(there)) throw in_the_way(entry);
    if (!manifest_.folders.contains(entry)) {
      if (fs::exists(there) && !fs::is_empty(p, ec)) throw in_the_way(entry);
      manifest_.folders.insert(entry);
      write_marker();
    }
    if (!fs::exists(there) && !fs::create_directory(p, ec) && ec)
      throw error(fmt::format("{}: cannot create {}: {}", who_, p.string(), ec.message()));
    return p;
  }

  // Writes the file `entry` atomically (write_file_atomically), listed first.
  void write(const std::string& entry, std::string_view text) { write_file_atomically(claim_file(entry), text); }

  // Removes the file `entry` if mase wrote it; anything else is left alone.
  void remove(const std::string& entry) {
    if (!manifest_.files.contains(entry) || !project_detail::reached_without_links(root_, entry)) return;
    std::error_code ec;
    std::filesystem::remove(root_ / entry, ec);
    if (ec) throw error(fmt::format("{}: cannot remove {}: {}", who_, (root_ / entry).string(), ec.message()));
    manifest_.files.erase(entry);
    write_marker();
  }

private:
  void check_entry(const std::string& entry) const {
    if (!project_detail::is_safe_entry(entry) || !project_detail::reached_without_links(root_, entry))
      throw in_the_way(entry);
  }

  error in_the_way(const std::string& entry) const {
    return error(fmt::format("{}: cannot write {}: {} holds something mase did not write there (or a link); nothing "
                             "of it was changed. Move it away, or give another output folder",
                             who_, entry, (root_ / entry).string()));
  }

  void write_marker() const {
    try {
      write_file_atomically(root_ / project_marker_name, project_detail::manifest_text(manifest_));
    } catch (const error& e) {
      throw error(fmt::format("{}: cannot write into {}: {}", who_, root_.string(), e.what()));
    }
  }

  std::string kind_, who_;
  std::filesystem::path root_;
  project_manifest manifest_;
};

}  // namespace mase
