// The compiler's metadata JSON in a blob, read as untrusted input: the checksums only say that
// the bytes are as written, not who wrote them. Every field pockc reads is checked for its type
// here, once, so that the reports can read them without a type error.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pock::tools {

// The known fields of `text` that have the expected types; each field left out for a wrong type
// is named in `dropped`. Unknown fields are kept (newer compilers may add some). Text that is
// not a JSON object gives an empty object and one entry in `dropped`.
nlohmann::json checked_metadata(const std::string& text, std::vector<std::string>* dropped);

}  // namespace pock::tools
