// Writes ORC files of dates and timestamps with Apache ORC's Java writer, in the hybrid
// (Julian/Gregorian, the writer's default) or the proleptic Gregorian calendar. See
// make_files.py, which compiles and runs it against the ORC jars pyspark ships.
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.ql.exec.vector.DateColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.LongColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.TimestampColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.VectorizedRowBatch;
import org.apache.orc.OrcFile;
import org.apache.orc.TypeDescription;
import org.apache.orc.Writer;

public class WriteDays {
  public static void main(String[] args) throws Exception {
    String out = args[0];
    boolean proleptic = args[1].equals("proleptic");
    String[] dates = args[2].split(",");
    Configuration conf = new Configuration();
    TypeDescription schema = TypeDescription.fromString("struct<id:int,d:date,ts:timestamp>");
    Writer writer = OrcFile.createWriter(new Path(out),
        OrcFile.writerOptions(conf).setSchema(schema).setProlepticGregorian(proleptic));
    VectorizedRowBatch batch = schema.createRowBatch();
    LongColumnVector id = (LongColumnVector) batch.cols[0];
    DateColumnVector d = (DateColumnVector) batch.cols[1];
    TimestampColumnVector ts = (TimestampColumnVector) batch.cols[2];
    // The values below are proleptic; the writer converts them to its calendar.
    d.changeCalendar(true, false);
    ts.changeCalendar(true, false);
    for (int i = 0; i < dates.length; i++) {
      int row = batch.size++;
      id.vector[row] = i;
      if (dates[i].equals("null")) {
        d.noNulls = false;
        d.isNull[row] = true;
        ts.noNulls = false;
        ts.isNull[row] = true;
        continue;
      }
      LocalDate date = LocalDate.parse(dates[i]);
      d.vector[row] = date.toEpochDay();
      LocalDateTime wall = date.atTime(1, 2, 3, 123_456_000);
      ts.time[row] = wall.toEpochSecond(ZoneOffset.UTC) * 1000 + 123;
      ts.nanos[row] = 123_456_000;
    }
    writer.addRowBatch(batch);
    writer.close();
  }
}
