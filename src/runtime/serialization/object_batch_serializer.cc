#include "runtime/serialization/object_batch_serializer.h"

#include <cxxabi.h>

#include <cstdlib>

namespace sluice::runtime {

std::string readableTypeName(const std::type_info& type) {
  int status = 0;
  char* name = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  if (status != 0 || name == nullptr) return type.name();
  std::string out(name);
  std::free(name);
  // libstdc++'s inline namespace and default arguments make std::string unreadable.
  for (const std::string_view from : {std::string_view("std::__cxx11::basic_string<char, std::char_traits<char>, "
                                                       "std::allocator<char> >"),
                                      std::string_view("std::__cxx11::")}) {
    const std::string_view to = from.size() > 20 ? "std::string" : "std::";
    for (size_t pos = out.find(from); pos != std::string::npos; pos = out.find(from, pos + to.size())) {
      out.replace(pos, from.size(), to);
    }
  }
  return out;
}

}  // namespace sluice::runtime
