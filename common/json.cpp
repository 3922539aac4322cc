/*
 * json.cpp — the one compiled copy of Json's members (common/json.h declares it extern).
 */
#include "common/json.h"

template class nlohmann::basic_json<nlohmann::ordered_map>;
