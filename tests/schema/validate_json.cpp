// validate_json SCHEMA FILE...: check each JSON FILE against a draft-07 JSON Schema (valijson).
// Prints "ok FILE" or every violation with its JSON path; exit 0 when all are valid, 1 when one
// is not, 2 on unreadable input. Used by tests/integration/test_schemas.sh.
#include <nlohmann/json.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <fstream>
#include <iostream>
#include <optional>
#include <string>

namespace {

std::optional<nlohmann::json> load(const char* path) {
    std::ifstream in(path);
    if (!in) {
        std::cerr << "validate_json: cannot open " << path << '\n';
        return std::nullopt;
    }
    try {
        return nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
        std::cerr << "validate_json: " << path << ": not JSON: " << e.what() << '\n';
        return std::nullopt;
    }
}

std::string where(const std::vector<std::string>& context) {
    std::string out;
    for (const auto& c : context) {
        out += c;
    }
    return out;
}

bool validate(const valijson::Schema& schema, const char* path, const nlohmann::json& doc) {
    valijson::Validator validator;
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter adapter(doc);
    if (validator.validate(schema, adapter, &results)) {
        std::cout << "ok " << path << '\n';
        return true;
    }
    valijson::ValidationResults::Error error;
    while (results.popError(error)) {
        std::cout << "invalid " << path << ": " << where(error.context) << ": " << error.description
                  << '\n';
    }
    return false;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: validate_json SCHEMA FILE...\n";
        return 2;
    }
    auto schema_doc = load(argv[1]);
    if (!schema_doc) {
        return 2;
    }
    valijson::Schema schema;
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter schema_adapter(*schema_doc);
    try {
        parser.populateSchema(schema_adapter, schema);
    } catch (const std::exception& e) {
        std::cerr << "validate_json: " << argv[1] << ": not a usable schema: " << e.what() << '\n';
        return 2;
    }
    int status = 0;
    for (int i = 2; i < argc; ++i) {
        auto doc = load(argv[i]);
        if (!doc) {
            return 2;
        }
        if (!validate(schema, argv[i], *doc)) {
            status = 1;
        }
    }
    return status;
}
