// The tfidf family has no reverse-mode rule: TfIdfVectorizer reads integer tokens, so no gradient
// can flow through it; its counts are constants to whatever trains after it.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {

void register_tfidf_gradients(GradRegistry&) {}

}  // namespace pock
