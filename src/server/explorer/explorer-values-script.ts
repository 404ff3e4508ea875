/**
 * The explorer script's reading of OData JSON values: each property's Edm type, the typed (annotated) form of an entity, an entity's URL path.
 * A part of `EXPLORER_SCRIPT` (explorer-script.ts): it runs inside its function and uses its helpers.
 */
export const EXPLORER_VALUES_SCRIPT = String.raw`  // ---- Types and values ---------------------------------------------------------------------------
  // The OData JSON rule: an annotated value has its annotation's type; otherwise a JSON string is a
  // String, true/false a Boolean, an integral number an Int32 and any other number a Double.
  function typeOf(entity, name) {
    var note = entity[name + "@odata.type"];
    if (typeof note === "string") return note.replace(/^Edm\./, "");
    if (name === "Timestamp") return "DateTime";
    var v = entity[name];
    if (typeof v === "boolean") return "Boolean";
    if (typeof v === "number") return Number.isInteger(v) ? "Int32" : "Double";
    return "String";
  }

  function propertyNames(entity) {
    return Object.keys(entity).filter(function (k) {
      return k.indexOf("odata.") !== 0 && k.indexOf("@odata.") < 0 && entity[k] !== null;
    });
  }

  // The typed form of an entity: every non-String value annotated (the CLI's export format).
  function typed(entity, withTimestamp) {
    var out = {};
    propertyNames(entity).forEach(function (name) {
      if (name === "Timestamp" && !withTimestamp) return;
      var type = typeOf(entity, name);
      out[name] = entity[name];
      if (type !== "String") out[name + "@odata.type"] = "Edm." + type;
    });
    return out;
  }

  function entityPath(table, entity) {
    var q = function (key) { return encodeURIComponent(String(key).replace(/'/g, "''")); };
    return encodeURIComponent(table) + "(PartitionKey='" + q(entity.PartitionKey) + "',RowKey='" + q(entity.RowKey) + "')";
  }

`;
