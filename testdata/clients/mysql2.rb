# Ruby mysql2 (Debian ruby-mysql2) through heapproxy, for
# server/drivers_test.go. Connection parts come from the environment
# (HP_HOST, HP_PORT, HP_USER, HP_PASSWORD, HP_DATABASE, optional
# HP_ENCODING), the statements from the arguments, each a JSON object
# {"name", "sql", "args"} (args escaped into the text for query(), given to
# execute() when prepared). Prints one JSON document: the tables (SHOW
# TABLES), each table's fields, and every statement's fields and values
# (each tagged with its Ruby class; a String in ASCII-8BIT is bytes, not
# text) through query() and through a prepared statement.
require 'bigdecimal'
require 'date'
require 'json'
require 'mysql2'

def tag(v)
  case v
  when nil then ['null', '']
  when String
    if v.encoding == Encoding::ASCII_8BIT
      ['bytes', v.dup.force_encoding(Encoding::UTF_8).scrub]
    else
      ['string', v.encode(Encoding::UTF_8)]
    end
  when Integer then ['int', v.to_s]
  when Float then ['float', v.to_s]
  when BigDecimal then ['decimal', v.to_s('F')]
  when Time then ['date', v.utc.strftime('%Y-%m-%d %H:%M:%S.%6N')]
  when DateTime, Date then ['date', v.strftime('%Y-%m-%d %H:%M:%S.%6N')]
  else ["other:#{v.class}", v.to_s]
  end
end

def result(r)
  {
    columns: r.fields.map { |f| { name: f, type: '', charset: nil } },
    rows: r.to_a.map { |row| row.map { |v| tag(v) } }
  }
end

def failure(e)
  { error: "#{e.respond_to?(:error_number) ? e.error_number : ''} #{e.respond_to?(:sql_state) ? e.sql_state : ''} #{e.message}" }
end

# inline puts the arguments into the statement's ? markers as a program
# without prepared statements does: Client#escape, quotes.
def inline(client, sql, params)
  at = 0
  params.each do |p|
    lit = p.is_a?(Integer) ? p.to_s : "'#{client.escape(p.to_s)}'"
    i = sql.index('?', at) or break
    sql = sql[0...i] + lit + sql[(i + 1)..]
    at = i + lit.length
  end
  sql
end

db = ENV.fetch('HP_DATABASE')
options = { host: ENV.fetch('HP_HOST'), port: Integer(ENV.fetch('HP_PORT')),
            username: ENV.fetch('HP_USER'), password: ENV.fetch('HP_PASSWORD'), database: db,
            database_timezone: :utc, application_timezone: :utc }
# HP_ENCODING: the connection's character set (mysql2 transcodes the
# program's strings to it and the results from it), e.g. latin1.
options[:encoding] = ENV['HP_ENCODING'] if ENV['HP_ENCODING']
client = Mysql2::Client.new(**options)
# What Grafana does on connect: the session works in UTC, as taken_at does.
client.query("SET time_zone = '+00:00'")
out = { driver: 'ruby-mysql2', tables: [], columns: [], results: {} }

client.query('SHOW TABLES', as: :array).each do |(t)|
  out[:tables] << [t, '']
  client.query("SELECT * FROM `#{t.gsub('`', '``')}` LIMIT 0").fields.each do |f|
    out[:columns] << [t, f, '', nil]
  end
end

ARGV.each do |arg|
  s = JSON.parse(arg)
  name, sql, params = s['name'], s['sql'], s['args'] || []
  begin
    out[:results][name] = result(client.query(inline(client, sql, params), as: :array))
  rescue Mysql2::Error => e
    out[:results][name] = failure(e)
  end
  begin
    st = client.prepare(sql)
    out[:results]["#{name}@prepared"] = result(st.execute(*params, as: :array))
    st.close
  rescue Mysql2::Error => e
    out[:results]["#{name}@prepared"] = failure(e)
  end
end
client.close

puts JSON.generate(out)
